#!/usr/bin/env python3
"""check-docs.py: every link in the tree's Markdown files goes somewhere.

For each Markdown file (git's tracked and untracked-but-not-ignored *.md,
or every *.md outside build/ and dot directories when git is missing):

  - every relative link, inline `[text](path)`, `[text](path#anchor)`,
    `[text](<path> "title")`, images, and reference definitions
    `[ref]: path`, must name an existing file or directory, resolved
    relative to the Markdown file. http(s)://, mailto: and other URL
    schemes are not checked;
  - an `#anchor` into a Markdown file (or a bare `#anchor` within the same
    file) must match one of its headings, slugged as GitHub does
    (lower case; punctuation other than '-' and '_' dropped; spaces become
    '-'; a repeated heading gets '-1', '-2', ...);
  - an inline code span that is a repository path, such as `mm/zap.c`,
    `scripts/gdb.sh` or `tests/qemu/`, must exist. Only spans that start
    with a top-level directory of the tree and contain nothing but path
    characters are checked; globs, placeholders (`NAME`, `<job>`, `{a,b}`)
    and build outputs (`build/...`) are left alone.

Links and code spans inside fenced code blocks are ignored.

Output is KTAP (version 1): one test per Markdown file, preceded by a
diagnostic line `# FILE:LINE: broken link to X` for each problem, then a
summary line. Exit status: 0 when every file is ok, 1 when a link is
broken, 2 on bad usage. This is the convention of the test runner's `cmd`
jobs (tests/qemu/runner.py).

    python3 scripts/check-docs.py            # the whole tree
    python3 scripts/check-docs.py README.md  # some files
"""
import os
import re
import subprocess
import sys
import unicodedata
from urllib.parse import unquote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE_RE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
ATX_RE = re.compile(r'^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$')
SETEXT_RE = re.compile(r'^ {0,3}(=+|-+)[ \t]*$')
# Inline links and images: [text](dest) / ![alt](dest), dest optionally in
# <...>, optionally followed by a title. Text may hold one level of [...].
INLINE_LINK_RE = re.compile(
    r'!?\[(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*\]'
    r'\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)'
    r'(?:\s+(?:"[^"]*"|\'[^\']*\'|\([^()]*\)))?\s*\)')
REF_DEF_RE = re.compile(r'^ {0,3}\[([^\]]+)\]:\s*(<[^<>]*>|\S+)')
CODE_SPAN_RE = re.compile(r'(`+)(.+?)(?<!`)\1(?!`)')
SCHEME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
# A code span checked as a repository path: top-level directory, then only
# plain path characters, and a file extension or a trailing slash.
PATH_CHARS_RE = re.compile(r'^[A-Za-z0-9_.\-/]+$')
PLACEHOLDER_RE = re.compile(r'(?:^|[/_.\-])[A-Z]{1,}(?:[/_.\-]|$)')


def slugify(text):
    """GitHub's heading anchor for the heading text (markdown source)."""
    text = re.sub(r'<[^>]+>', '', text)                          # inline HTML
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)        # links, images
    text = re.sub(r'!?\[([^\]]*)\]\[[^\]]*\]', r'\1', text)       # reference links
    text = text.replace('`', '')
    text = re.sub(r'(?<![\w\\])_{1,2}(.+?)_{1,2}(?!\w)', r'\1', text)  # _emphasis_
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LN' or cat == 'Mn':
            out.append(ch)
        elif ch == ' ':
            out.append('-')
        # everything else (punctuation, symbols) is dropped
    return ''.join(out)


def strip_code_spans(line):
    """The line with each inline code span blanked out (same length)."""
    return CODE_SPAN_RE.sub(lambda m: ' ' * len(m.group(0)), line)


def scan(text):
    """(headings' slugs, [(line, dest)] links, [(line, path)] code spans)."""
    slugs, seen = set(), {}
    links, spans = [], []
    fence = None
    prev = ''
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE_RE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip()[len(m.group(1)):].strip():
                fence = None
            prev = ''
            continue
        if m:
            fence = m.group(1)
            prev = ''
            continue
        heading = None
        m = ATX_RE.match(line)
        if m:
            heading = re.sub(r'[ \t]+#+$', '', m.group(2) or '')
        elif SETEXT_RE.match(line) and prev.strip() and not ATX_RE.match(prev):
            heading = prev.strip()          # "Title" underlined with === or ---
        if heading is not None:
            slug = slugify(heading)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            slugs.add(slug if count == 0 else f'{slug}-{count}')
        prev = line
        for cm in CODE_SPAN_RE.finditer(line):
            spans.append((n, cm.group(2).strip()))
        bare = strip_code_spans(line)
        for lm in INLINE_LINK_RE.finditer(bare):
            dest = lm.group(1)
            if dest.startswith('<') and dest.endswith('>'):
                dest = dest[1:-1]
            links.append((n, dest))
        dm = REF_DEF_RE.match(bare)
        if dm:
            dest = dm.group(2)
            if dest.startswith('<') and dest.endswith('>'):
                dest = dest[1:-1]
            links.append((n, dest))
    return slugs, links, spans


class Checker:
    def __init__(self, root):
        self.root = root
        self.top_dirs = {d for d in os.listdir(root)
                         if os.path.isdir(os.path.join(root, d))
                         and not d.startswith('.') and d != 'build'}
        self._slugs = {}

    def slugs_of(self, path):
        if path not in self._slugs:
            try:
                with open(path, encoding='utf-8') as f:
                    self._slugs[path] = scan(f.read())[0]
            except OSError:
                self._slugs[path] = set()
        return self._slugs[path]

    def check_link(self, md_path, dest):
        """None if the link is fine, else what is wrong with it."""
        if not dest or SCHEME_RE.match(dest) or dest.startswith('//'):
            return None                      # empty, or a URL (http:, mailto:, ...)
        target, _, anchor = dest.partition('#')
        target, anchor = unquote(target), unquote(anchor)
        if target.startswith('/'):
            path = os.path.join(self.root, target.lstrip('/'))
        elif target:
            path = os.path.join(os.path.dirname(md_path), target)
        else:
            path = md_path
        path = os.path.normpath(path)
        if not os.path.exists(path):
            return 'no such file'
        if os.path.relpath(path, self.root).startswith('..'):
            return 'outside the tree'
        if anchor and path.endswith('.md') and os.path.isfile(path):
            if anchor.lower() not in self.slugs_of(path):
                return 'no such heading'
        return None

    def is_repo_path(self, span):
        if not PATH_CHARS_RE.match(span) or '/' not in span or '//' in span:
            return False
        first = span.split('/', 1)[0]
        if first not in self.top_dirs:
            return False
        last = span.rstrip('/').rsplit('/', 1)[-1]
        return span.endswith('/') or '.' in last or last == 'Makefile'

    def check_file(self, md_path):
        """[(line, message)] for one Markdown file."""
        with open(md_path, encoding='utf-8') as f:
            _, links, spans = scan(f.read())
        problems = []
        for n, dest in links:
            why = self.check_link(md_path, dest)
            if why:
                problems.append((n, f'broken link to {dest} ({why})'))
        for n, span in spans:
            if self.is_repo_path(span) and not os.path.exists(os.path.join(self.root, span)) \
                    and not PLACEHOLDER_RE.search(span):   # NAME, N, ... stand for something
                problems.append((n, f'broken link to {span} (a path in `code` that does not exist)'))
        return sorted(problems)


def markdown_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--cached', '--others',
                              '--exclude-standard', '--', '*.md'],
                             capture_output=True, check=True).stdout
        files = sorted({p for p in out.decode().split('\0') if p})
        return [f for f in files if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith('.') and
                             os.path.relpath(os.path.join(d, x), root) != 'build')
            found += [os.path.relpath(os.path.join(d, x), root) for x in names if x.endswith('.md')]
        return sorted(found)


INDEX = 'docs/README.md'


def unindexed_pages(root, files):
    """Pages under docs/ that docs/README.md (the index) does not link."""
    try:
        with open(os.path.join(root, INDEX), encoding='utf-8') as f:
            linked = {os.path.normpath(os.path.join('docs', m.group(1).split('#')[0]))
                      for m in re.finditer(r'\]\(([^)\s]+)\)', f.read())}
    except OSError:
        return []
    return [f for f in files if f.startswith('docs/') and f.endswith('.md') and f != INDEX
            and os.path.normpath(f) not in linked]


def main(argv):
    if any(a in ('-h', '--help') for a in argv):
        print(__doc__.strip())
        return 0
    if any(a.startswith('-') for a in argv):
        print(f'usage: {sys.argv[0]} [FILE.md...]', file=sys.stderr)
        return 2
    files = [os.path.relpath(os.path.abspath(a), ROOT) for a in argv] or markdown_files(ROOT)
    checker = Checker(ROOT)
    print('KTAP version 1')
    print(f'1..{len(files)}')
    broken = bad_files = 0
    for i, rel in enumerate(files, 1):
        try:
            problems = checker.check_file(os.path.join(ROOT, rel))
        except (OSError, UnicodeDecodeError) as e:
            problems = [(0, f'cannot read it: {e}')]
        if rel == INDEX:
            problems += [(0, f'the index does not list {p}')
                         for p in unindexed_pages(ROOT, markdown_files(ROOT))]
        for n, msg in problems:
            print(f'# {rel}:{n}: {msg}')
        broken += len(problems)
        bad_files += bool(problems)
        print(f'{"not ok" if problems else "ok"} {i} {rel}')
    if broken:
        print(f'# check-docs: {broken} broken link(s) in {bad_files} of {len(files)} Markdown files')
    else:
        print(f'# check-docs: every link in {len(files)} Markdown files resolves')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
