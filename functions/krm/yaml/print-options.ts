/** Options that make the `yaml` printer match go-yaml's block style (kpt's compact sequences, no line folding). */
export const printOptions = {
  indentSeq: false,
  lineWidth: 0,
  flowCollectionPadding: false,
} as const
