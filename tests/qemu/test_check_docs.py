"""Tests of scripts/check-docs.py: python3 -m unittest tests/qemu/test_check_docs.py

The heading slugs (GitHub's rule), what counts as a link or a repository
path, and the KTAP output and exit status on a small tree made in a
temporary directory.
"""
import contextlib
import importlib.util
import io
import os
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / 'scripts' / 'check-docs.py'
spec = importlib.util.spec_from_file_location('check_docs', SCRIPT)
check_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_docs)


class Slugs(unittest.TestCase):
    def test_github_rule(self):
        cases = {
            'Two commands': 'two-commands',
            'Invariants (checked by `mm_verify()` and by tests)':
                'invariants-checked-by-mm_verify-and-by-tests',
            'The random mm sequence on the host, and `make fuzz`':
                'the-random-mm-sequence-on-the-host-and-make-fuzz',
            'struct page (64 bytes)': 'struct-page-64-bytes',
            '**Today** and _then_': 'today-and-then',
            'C++ & Rust': 'c--rust',
            'Files: the VFS, ramfs': 'files-the-vfs-ramfs',
            'See [boot](boot.md)': 'see-boot',
            'mm/page_alloc': 'mmpage_alloc',
            'Éléphant 2': 'éléphant-2',
        }
        for heading, slug in cases.items():
            self.assertEqual(check_docs.slugify(heading), slug, heading)

    def test_repeated_headings_are_numbered(self):
        slugs, _, _ = check_docs.scan('# Notes\n\n## Notes\n\n### Notes #\n')
        self.assertEqual(slugs, {'notes', 'notes-1', 'notes-2'})

    def test_setext_headings(self):
        slugs, _, _ = check_docs.scan('Title\n=====\n\nPart two\n---\n')
        self.assertEqual(slugs, {'title', 'part-two'})


class Scan(unittest.TestCase):
    def test_links_outside_code_only(self):
        text = ('[a](x.md) and `[b](y.md)` and ![img](pic.png "title")\n'
                '```\n[c](z.md)\n# not a heading\n```\n'
                '[d](<with space.md>) [e](f.md#anchor) [g]: ref.md\n')
        slugs, links, _ = check_docs.scan(text)
        self.assertEqual(slugs, set())
        self.assertEqual([d for _, d in links],
                         ['x.md', 'pic.png', 'with space.md', 'f.md#anchor'])
        _, links, _ = check_docs.scan('[ref]: docs/x.md\n')
        self.assertEqual(links, [(1, 'docs/x.md')])

    def test_line_numbers(self):
        _, links, spans = check_docs.scan('one\n\n[x](a.md)\n`mm/zap.c`\n')
        self.assertEqual(links, [(3, 'a.md')])
        self.assertEqual(spans, [(4, 'mm/zap.c')])


class Tree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        for d in ('docs/mm', 'mm', 'scripts'):
            os.makedirs(os.path.join(self.root, d))
        self.write('mm/zap.c', '')
        self.write('scripts/run.sh', '')
        self.write('docs/mm/faults.md', '# Faults\n\n## File mappings\n')
        self.checker = check_docs.Checker(self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), 'w', encoding='utf-8') as f:
            f.write(text)

    def problems(self, rel, text):
        self.write(rel, text)
        return self.checker.check_file(os.path.join(self.root, rel))

    def test_good_links(self):
        self.assertEqual(self.problems('docs/a.md', (
            '# Top\n[f](mm/faults.md) [g](mm/faults.md#file-mappings) [h](mm/)\n'
            '[self](#top) [up](../mm/zap.c) [abs](/scripts/run.sh)\n'
            '[web](https://example.org/x) [mail](mailto:a@b.c) [none](http://x#y)\n'
            '`mm/zap.c` `scripts/run.sh` `mm/` `docs/mm/faults.md`\n')), [])

    def test_broken_links(self):
        got = self.problems('docs/a.md', (
            '# Top\n[f](mm/nope.md)\n[g](mm/faults.md#no-such)\n[s](#bottom)\n'
            '[out](../../outside.md)\n'))
        self.assertEqual([(n, m.split(' (')[0]) for n, m in got], [
            (2, 'broken link to mm/nope.md'),
            (3, 'broken link to mm/faults.md#no-such'),
            (4, 'broken link to #bottom'),
            (5, 'broken link to ../../outside.md'),
        ])

    def test_code_paths(self):
        got = self.problems('README.md', (
            '`mm/gone.c` `scripts/` `mm/NAME.c` `mm/*.c` `build/quire.elf`\n'
            '`mm/zap.c:12` `quire/pte.h` `mm/{a,b}.c` `include/x`\n'
            '```\n`mm/in_fence.c`\n```\n'))
        self.assertEqual(got, [(1, 'broken link to mm/gone.c '
                                   '(a path in `code` that does not exist)')])

    def test_ktap_output_and_status(self):
        self.write('README.md', '[ok](docs/mm/faults.md)\n')
        self.write('docs/bad.md', 'x\n[b](nowhere.md)\n')
        old_root = check_docs.ROOT
        check_docs.ROOT = self.root
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = check_docs.main([])
        finally:
            check_docs.ROOT = old_root
        lines = out.getvalue().splitlines()
        self.assertEqual(status, 1)
        self.assertEqual(lines[:2], ['KTAP version 1', '1..3'])
        self.assertIn('# docs/bad.md:2: broken link to nowhere.md (no such file)', lines)
        self.assertEqual([l for l in lines if ' ok ' in f' {l}'],
                         ['ok 1 README.md', 'not ok 2 docs/bad.md', 'ok 3 docs/mm/faults.md'])
        self.assertTrue(lines[-1].startswith('# check-docs: 1 broken link'))


if __name__ == '__main__':
    unittest.main()
