#!/usr/bin/env python3
"""Draws the scaling curves of docs/PERFORMANCE.md as SVG, from the output of

    swift run -c release --package-path Benchmarks compare --curves --rounds 5 >curves.json
    /usr/bin/python3 Benchmarks/scripts/draw-curves.py curves.json

one chart per curve in docs/charts/ (timer.svg, fd.svg, fd-10-ready.svg,
fd-100-ready.svg, held.svg): the size on a
logarithmic x axis, ns per operation on a linear y axis from 0, one line per loop,
each point the median of the rounds with a bar from the fastest round to the
slowest. The y axis is linear from 0, or logarithmic when the slowest point is
LOG_Y_RATIO times the fastest. Plain SVG written here: nothing is fetched, no
plotting library.
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHARTS = {
    'timer': ('Timer schedule+cancel against pending timers', 'pending timers', 'ns per schedule+cancel'),
    'fd': ('fd readiness dispatch (1 ready) against registered descriptors', 'registered descriptors',
           'ns per dispatch'),
    'fd-10-ready': ('fd readiness dispatch (10 ready) against registered descriptors', 'registered descriptors',
                    'ns per dispatched descriptor'),
    'fd-100-ready': ('fd readiness dispatch (100 ready) against registered descriptors', 'registered descriptors',
                     'ns per dispatched descriptor'),
    'held': ('A held event against the subjects the engine keeps', 'subjects held', 'ns per held event'),
}
COLOURS = {'MainLoop': '#1f6feb', 'raw libevent': '#d1242f', 'libuv': '#2da44e', 'GLib': '#8250df',
           'sd-event': '#bf8700'}
# A chart whose slowest point is this many times its fastest gets a
# logarithmic y axis: GLib polls every descriptor on each iteration, and a
# linear axis up to its 10^5 point would flatten every other line.
LOG_Y_RATIO = 20
WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 50


def nice_ceiling(value):
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * 10 ** exponent >= value:
            return step * 10 ** exponent
    return 10 ** (exponent + 1)


def label(size):
    if size >= 100_000 and math.log10(size).is_integer():
        return '10^%d' % round(math.log10(size))
    return '{:,}'.format(size)


def chart(curve, points):
    title, x_name, y_name = CHARTS[curve]
    sizes = sorted({point['size'] for point in points})
    x_low, x_high = math.log10(sizes[0]), math.log10(sizes[-1])
    y_high = nice_ceiling(max(point['max'] for point in points) * 1.05)
    y_low_value = min(point['min'] for point in points)
    logarithmic = y_low_value > 0 and y_high / y_low_value >= LOG_Y_RATIO
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    if logarithmic:
        y_low_exponent = math.floor(math.log10(y_low_value))
        y_high_exponent = math.ceil(math.log10(y_high))

    def x(size):
        span = (x_high - x_low) or 1
        return LEFT + (math.log10(size) - x_low) / span * plot_width

    def y(value):
        if logarithmic:
            span = (y_high_exponent - y_low_exponent) or 1
            return TOP + plot_height - (math.log10(value) - y_low_exponent) / span * plot_height
        return TOP + plot_height - value / y_high * plot_height

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (WIDTH, HEIGHT, WIDTH, HEIGHT),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (LEFT, title)]
    grid = ([10 ** exponent for exponent in range(y_low_exponent, y_high_exponent + 1)] if logarithmic
            else [y_high * step / 4 for step in range(5)])
    for value in grid:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                   % (LEFT, y(value), LEFT + plot_width, y(value)))
        text = label(int(value)) if logarithmic else '%g' % round(value, 1)
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (LEFT - 6, y(value) + 4, text))
    for size in sizes:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>'
                   % (x(size), TOP + plot_height, x(size), TOP + plot_height + 5))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x(size), TOP + plot_height + 18, label(size)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (LEFT + plot_width / 2, HEIGHT - 8, x_name))
    out.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">%s</text>'
               % (TOP + plot_height / 2, y_name + (' (log scale)' if logarithmic else '')))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
               % (LEFT, TOP, plot_width, plot_height))
    loops = sorted({point['loop'] for point in points}, key=lambda name: (name != 'MainLoop', name))
    for index, loop in enumerate(loops):
        colour = COLOURS.get(loop, '#555')
        line = sorted((point for point in points if point['loop'] == loop), key=lambda point: point['size'])
        path = ' '.join('%.1f,%.1f' % (x(point['size']), y(point['ns'])) for point in line)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, colour))
        for point in line:
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>'
                       % (x(point['size']), y(point['min']), x(point['size']), y(point['max']), colour))
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %.1f ns</title></circle>'
                       % (x(point['size']), y(point['ns']), colour, loop, label(point['size']), point['ns']))
        legend_y = TOP + 16 + index * 20
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (WIDTH - RIGHT + 12, legend_y - 4, WIDTH - RIGHT + 36, legend_y - 4, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (WIDTH - RIGHT + 42, legend_y, loop))
    out.append('</svg>')
    return '\n'.join(out) + '\n'


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    points = [json.loads(line) for line in open(sys.argv[1], encoding='utf-8') if line.strip().startswith('{')]
    by_curve = {}
    for point in points:
        by_curve.setdefault(point['curve'], []).append(point)
    if not by_curve:
        sys.exit('error: no curve points in %s' % sys.argv[1])
    directory = os.path.join(ROOT, 'docs', 'charts')
    os.makedirs(directory, exist_ok=True)
    for curve, curve_points in sorted(by_curve.items()):
        if curve not in CHARTS:
            sys.exit('error: unknown curve %s' % curve)
        with open(os.path.join(directory, curve + '.svg'), 'w', encoding='utf-8') as handle:
            handle.write(chart(curve, curve_points))
    print('draw-curves: %s' % ', '.join('docs/charts/%s.svg' % curve for curve in sorted(by_curve)))


main()
