/** Hostile inputs: fields of the wrong type, `metadata` above all. */
import { validConfig, list } from './build.js'
import type { HostileCase } from './build.js'

export const fieldTypeCases: HostileCase[] = [
  // Wrong types: rejected, not taken as absent.
  {
    name: '`metadata.annotations` as a list',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n    - x\n'),
    expect: 'any',
  },
  {
    name: 'an annotation value that is a map',
    input: list(
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n      kpt.dev/config-injection: {a: b}\n',
    ),
    expect: 'any',
  },
  // Every program reads item paths (annotations), so `metadata` must be a map for all but dependency-check,
  // which looks at kinds first; only fan-out and dependency-check read every item's kind.
  {
    name: '`metadata` as a list',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n  - name: bad\n'),
    expect: 'error',
    message: /ConfigMap\/: `metadata` must be a map/,
    errorIn: ['config-injection', 'fan-out', 'package-context', 'package-variant', 'pipeline-prepend'],
  },
  {
    name: '`kind` as a list',
    input: list('- apiVersion: v1\n  kind: [a]\n  metadata:\n    name: bad\n'),
    expect: 'error',
    message: /`kind` must be a string/,
    errorIn: ['fan-out', 'dependency-check'],
  },
  {
    name: 'the functionConfig with `spec` a string',
    input: (program) =>
      list(
        '',
        validConfig(program || 'x').replace(/ {2}spec:\n(?: {4}.*\n)*/, '  spec: hello\n') ||
          'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata:\n    name: c\n  spec: hello\n',
      )(program),
    expect: 'error',
    message: /`spec` must be (a map|an object)/,
  },
  {
    name: 'the functionConfig with `metadata` a list',
    input: (program) =>
      list(
        '',
        (
          validConfig(program) ||
          'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata:\n    name: c\n'
        ).replace(/ {2}metadata:\n(?: {4}.*\n)*/, '  metadata:\n  - name: x\n'),
      )(program),
    expect: 'error',
    message: /`metadata` must be a map/,
  },
  {
    name: 'a PackageRevision with `spec` a string',
    input: list(
      '- apiVersion: porch.kpt.dev/v1alpha1\n  kind: PackageRevision\n  metadata:\n    name: blueprints.nginx.v2\n    namespace: default\n  spec: hello\n',
    ),
    expect: 'any',
  },
  {
    name: 'a Repository with `metadata.labels` a string',
    input: list(
      '- apiVersion: config.porch.kpt.dev/v1alpha1\n  kind: Repository\n  metadata:\n    name: r\n    namespace: default\n    labels: eu\n  spec: {type: git}\n',
    ),
    expect: 'any',
  },
]
