#!/usr/bin/env python3
"""Writes the current figures into docs/PERFORMANCE.md and the README's summary,
from the output of full `compare` runs:

    swift run -c release --package-path Benchmarks compare --json --rounds 9 >RUN.json 2>RUN.targets
    /usr/bin/python3 Benchmarks/scripts/performance-report.py RUN [RUN...]

Each RUN names the two files of one run (RUN.json: a row a line; RUN.targets:
the targets and the timer lateness, a JSON object a line), and a third if it is
there (RUN.allocations: the output of `compare --allocations`). A figure is the
median of the runs' values, each of which is already the median of that run's
rounds; the range beside it is the runs' lowest and highest. The text between
the markers `<!-- NAME: ... -->` and `<!-- end NAME -->` is replaced; the rest of
each file is left as it is.
"""
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The README's short table: the targets that compare MainLoop with a peer loop.
SUMMARY_PREFIXES = ('timer schedule+cancel', 'fd readiness dispatch', 'wake p50', 'in-loop post', 'actor call', 'MainLoopNIO',
                    'Foundation NotificationCenter')


def read_lines(path):
    objects = []
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            line = line.strip()
            if line.startswith('{'):
                objects.append(json.loads(line))
    return objects


def load(runs):
    rows, targets, lateness = {}, {}, []
    for run in runs:
        for row in read_lines(run + '.json'):
            rows.setdefault(row['name'], []).append(row)
        for item in read_lines(run + '.targets'):
            if 'target' in item:
                targets.setdefault(item['target'], []).append(item)
            elif item.get('name', '').startswith('MainLoop timer lateness'):
                lateness.append(item)
    return rows, targets, lateness


def spread(values, places):
    low, high = min(values), max(values)
    if len(values) == 1 or round(low, places) == round(high, places):
        return ''
    return '%.*f–%.*f' % (places, low, places, high)


def rows_table(rows):
    lines = ['| row | ns per operation | runs\' range | × raw libevent |', '|---|---:|---:|---:|']
    for name, runs in rows.items():
        ns = [run['nsPerEvent'] for run in runs]
        ratio = statistics.median(run['ratioToLibevent'] for run in runs)
        lines.append('| %s | %.1f | %s | %.2f |' % (name, statistics.median(ns), spread(ns, 1), ratio))
    return lines


def targets_table(targets, only=None):
    lines = ['| target | measured | runs\' range | met in |', '|---|---:|---:|---|']
    for title, runs in targets.items():
        if only and not title.startswith(only):
            continue
        medians = [run['median'] for run in runs]
        unit = ' ns' if ' ns ' in title else '×'
        met = sum(1 for run in runs if run['met'])
        lines.append('| %s | %.2f%s | %s | %d of %d runs |' % (title, statistics.median(medians), unit,
                                                              spread(medians, 2), met, len(runs)))
    return lines


def allocations_table(runs):
    counts = {}
    for run in runs:
        path = run + '.allocations'
        if os.path.exists(path):
            for item in read_lines(path):
                counts.setdefault(item['allocations'], []).append(item['perOperation'])
    if not counts:
        return None
    lines = ['| row | heap allocations per operation |', '|---|---:|']
    for name, values in counts.items():
        lines.append('| %s | %.2f |' % (name, statistics.median(values)))
    return lines


def replace_block(path, name, lines):
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    pattern = re.compile(r'(<!-- %s:[^\n]*-->\n).*?(<!-- end %s -->)' % (re.escape(name), re.escape(name)), re.S)
    if not pattern.search(text):
        sys.exit('error: %s has no %s block' % (path, name))
    text = pattern.sub(lambda match: match.group(1) + '\n'.join(lines) + '\n' + match.group(2), text)
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(text)


def main():
    runs = sys.argv[1:]
    if not runs:
        sys.exit(__doc__)
    rows, targets, lateness = load(runs)
    if not rows or not targets:
        sys.exit('error: no compare rows or targets in %s' % ', '.join(runs))
    count = len(runs)
    figures = ['%d full run%s of `compare`, each the median of its rounds; a figure is the median of the runs.'
               % (count, '' if count == 1 else 's'), '', '### Targets', ''] + targets_table(targets)
    figures += ['', '### Every row', ''] + rows_table(rows)
    if lateness:
        p50 = statistics.median(item['p50'] for item in lateness)
        p99 = statistics.median(item['p99'] for item in lateness)
        earliest = min(item['earliest'] for item in lateness)
        figures += ['', 'Timer lateness on the real clock (one-shot timers 1 ms apart): p50 %.1f µs, p99 %.1f µs; '
                    'the earliest of all runs %.1f µs late (a timer never fires early).' % (p50, p99, earliest)]
    replace_block(os.path.join(ROOT, 'docs', 'PERFORMANCE.md'), 'figures', figures)
    allocations = allocations_table(runs)
    if allocations:
        replace_block(os.path.join(ROOT, 'docs', 'PERFORMANCE.md'), 'allocations', allocations)
    summary = targets_table(targets, only=SUMMARY_PREFIXES)
    replace_block(os.path.join(ROOT, 'README.md'), 'performance-summary', summary)
    print('performance-report: %d runs, %d rows, %d targets' % (count, len(rows), len(targets)))


main()
