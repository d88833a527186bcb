import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fastImport, git } from '../../git/git.js'
import { textFile } from '../../package/files.js'
import { fastImportStream, quotePath } from './fast-import.js'

const committer = { name: 'test', email: 'test@example.com', time: 1_700_000_000 }

describe('fastImportStream', () => {
  let repo: string
  beforeEach(async () => {
    repo = mkdtempSync(join(tmpdir(), 'kpt-variants-fast-import-'))
    await git(['init', '-q', '--bare', repo], { cwd: repo })
  })
  afterEach(() => rmSync(repo, { recursive: true, force: true }))

  test('sends each content once and writes one commit per package on its parent, modes kept', async () => {
    const shared = textFile('apiVersion: v1\nkind: ConfigMap\n')
    const stream = fastImportStream(
      [
        {
          ref: 'refs/heads/a',
          message: 'a\n',
          directory: 'pkgs/a',
          files: new Map([
            ['cm.yaml', shared],
            ['run.sh', textFile('#!/bin/sh\n', true)],
          ]),
        },
        { ref: 'refs/heads/b', message: 'b\n', directory: 'pkgs/b', files: new Map([['cm.yaml', shared]]) },
      ],
      committer,
    )
    expect(stream.toString().match(/^blob$/gm)).toHaveLength(2)
    await fastImport(repo, stream)
    expect(await git(['ls-tree', '-r', 'refs/heads/a'], { cwd: repo })).toMatch(
      /^100644 blob \w+\tpkgs\/a\/cm\.yaml\n100755 blob \w+\tpkgs\/a\/run\.sh$/,
    )
    const a = await git(['rev-parse', 'refs/heads/a:pkgs/a/cm.yaml'], { cwd: repo })
    expect(await git(['rev-parse', 'refs/heads/b:pkgs/b/cm.yaml'], { cwd: repo })).toBe(a)
    expect(await git(['log', '-1', '--format=%an <%ae> %at %s', 'refs/heads/b'], { cwd: repo })).toBe(
      'test <test@example.com> 1700000000 b',
    )

    // On top of a: replace pkgs/a by a tree of the repository, remove nothing else; then remove it; tag the first.
    const tree = await git(['rev-parse', 'refs/heads/b:pkgs/b'], { cwd: repo })
    const parent = await git(['rev-parse', 'refs/heads/a'], { cwd: repo })
    await fastImport(
      repo,
      fastImportStream(
        [
          { ref: 'refs/heads/c', parent, message: 'c\n', directory: 'pkgs/a', tree },
          { ref: 'refs/heads/c', message: 'd\n', directory: 'pkgs/a' },
        ],
        committer,
        [{ ref: 'refs/tags/c1', commitIndex: 0 }],
      ),
    )
    expect(await git(['ls-tree', '-r', '--name-only', 'refs/tags/c1'], { cwd: repo })).toBe('pkgs/a/cm.yaml')
    expect(await git(['ls-tree', '-r', '--name-only', 'refs/heads/c'], { cwd: repo })).toBe('')
    expect(await git(['rev-parse', 'refs/heads/c~1'], { cwd: repo })).toBe(
      await git(['rev-parse', 'refs/tags/c1'], { cwd: repo }),
    )
  })

  test('a commit can set and remove more package directories than its own', async () => {
    const cm = textFile('kind: ConfigMap\n')
    await fastImport(
      repo,
      fastImportStream(
        [
          { ref: 'refs/heads/base', message: 'a\n', directory: 'a', files: new Map([['cm.yaml', cm]]) },
          { ref: 'refs/heads/base', message: 'gone\n', directory: 'gone', files: new Map([['cm.yaml', cm]]) },
        ],
        committer,
      ),
    )
    const tree = await git(['rev-parse', 'refs/heads/base:a'], { cwd: repo })
    const parent = await git(['rev-parse', 'refs/heads/base'], { cwd: repo })
    await fastImport(
      repo,
      fastImportStream(
        [
          {
            ref: 'refs/heads/both',
            parent,
            message: 'b, c, no gone\n',
            directory: 'b',
            tree,
            more: [{ directory: 'c', tree }, { directory: 'gone' }],
          },
        ],
        committer,
      ),
    )
    expect((await git(['ls-tree', '-r', '--name-only', 'refs/heads/both'], { cwd: repo })).split('\n')).toEqual([
      'a/cm.yaml',
      'b/cm.yaml',
      'c/cm.yaml',
    ])
  })

  test('equal contents in different Buffers are sent once; a message in any script keeps its bytes', async () => {
    const same = () => textFile('kind: Service\n')
    const stream = fastImportStream(
      [
        { ref: 'refs/heads/a', message: 'Créer a ✓\n', directory: 'a', files: new Map([['svc.yaml', same()]]) },
        {
          ref: 'refs/heads/b',
          message: 'b\n',
          directory: 'b',
          files: new Map([
            ['svc.yaml', same()],
            ['other.yaml', textFile('kind: Other\n')],
          ]),
        },
      ],
      committer,
    )
    expect(stream.toString().match(/^blob$/gm)).toHaveLength(2)
    await fastImport(repo, stream)
    expect(await git(['rev-parse', 'refs/heads/a:a/svc.yaml'], { cwd: repo })).toBe(
      await git(['rev-parse', 'refs/heads/b:b/svc.yaml'], { cwd: repo }),
    )
    expect(await git(['log', '-1', '--format=%s', 'refs/heads/a'], { cwd: repo })).toBe('Créer a ✓')
  })

  test('quotes a path only when fast-import would misread it', () => {
    expect(quotePath('nginx/deploy ment.yaml')).toBe('nginx/deploy ment.yaml')
    expect(quotePath('nginx/a\nb')).toBe('"nginx/a\\nb"')
    expect(quotePath('"quoted"\\x')).toBe('"\\"quoted\\"\\\\x"')
  })
})
