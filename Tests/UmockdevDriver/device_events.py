#!/usr/bin/env python3
"""Accessories and screens from device events, end to end, with umockdev.

Run as `umockdev-wrapper /usr/bin/python3 device_events.py MAINLOOP WORKDIR`
(the wrapper preloads umockdev into this script and into `mainloop run`,
which it starts: both see the testbed's /sys, and the testbed's uevents
reach the service's NETLINK_KOBJECT_UEVENT socket, as upower's and
iio-sensor-proxy's own integration tests run their daemons). Prints the
service's observations and exits non-zero with a reason when a check fails.
"""
import json
import os
import subprocess
import sys
import time

import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev

mainloop, work = sys.argv[1], sys.argv[2]
socket_path = os.path.join(work, 's.sock')
output_path = os.path.join(work, 'observations')


def fail(reason):
    print('FAIL: ' + reason)
    print(open(output_path).read())
    service.kill()
    sys.exit(1)


def eventually(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def observations():
    lines = open(output_path).read().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def ctl(*words):
    reply = subprocess.run([mainloop, 'ctl', '--socket', socket_path, *words], capture_output=True, text=True)
    if reply.returncode != 0:
        fail('ctl %s: %s %s' % (words, reply.stdout, reply.stderr))
    return json.loads(reply.stdout)


def values():
    return ctl('query', 'values')['values']


testbed = UMockdev.Testbed.new()
card = testbed.add_device('drm', 'card0', None, [], ['DEVTYPE', 'drm_minor'])
connector = testbed.add_device('drm', 'card0-HDMI-A-1', card, ['status', 'disconnected', 'modes', ''], [])

service = subprocess.Popen(
    [mainloop, 'run', '--socket', socket_path, '--defaults-file', os.path.join(work, 'd.json'),
     '--locale-file', os.path.join(work, 'locale'), '--zone-file', os.path.join(work, 'localtime'), '--no-system-bus'],
    stdout=open(output_path, 'w'), stderr=subprocess.DEVNULL)
if not eventually(lambda: os.path.exists(socket_path)):
    fail('the service did not listen')
ctl('query', 'state')

# Live: a USB device plugged in reaches the active app.
dock = testbed.add_device('usb', 'usb1-1', None, ['serial', 'ABC'],
                          ['DEVTYPE', 'usb_device', 'ID_SERIAL', 'Dock_ABC'])
testbed.uevent(dock, 'add')
if not eventually(lambda: any(o.get('notification') == 'accessoryDidConnect' and o.get('accessory') == 'Dock_ABC@usb1-1'
                              for o in observations())):
    fail('no accessoryDidConnect for the dock')

# Suspended: a screen connected (hotplug event on the card), the dock
# unplugged, a pen plugged in and out again (net zero).
if ctl('home')['state'] != 'suspended':
    fail('home did not suspend the app')
testbed.set_attribute(connector, 'status', 'connected')
testbed.set_attribute(connector, 'modes', '1920x1080\n1280x720\n')
testbed.set_property(card, 'HOTPLUG', '1')
testbed.uevent(card, 'change')
testbed.uevent(dock, 'remove')
pen = testbed.add_device('usb', 'usb1-2', None, [], ['DEVTYPE', 'usb_device', 'ID_SERIAL', 'Pen_1'])
testbed.uevent(pen, 'add')
testbed.uevent(pen, 'remove')
if not eventually(lambda: values()['screen'].get('card0-HDMI-A-1') is True
                  and not values()['accessory'].get('Dock_ABC@usb1-1', False)):
    fail('the held device events did not reach the center: %s' % values())
before = len(observations())
if ctl('foreground')['state'] != 'active':
    fail('foreground did not bring the app back')
if not eventually(lambda: any(o.get('callback') == 'didBecomeActive' for o in observations()[before:])):
    fail('no didBecomeActive after foreground')
resumed = observations()[before:]
notifications = [o for o in resumed if 'notification' in o]
names = sorted(o['notification'] for o in notifications)
expected = ['accessoryDidDisconnect', 'screenDidConnect', 'screenModeDidChange']
if names != expected:
    fail('expected %s on resume, got %s' % (expected, names))
mode = [o for o in notifications if o['notification'] == 'screenModeDidChange'][0]
if mode.get('mode') != '1920x1080' or mode.get('screen') != 'card0-HDMI-A-1':
    fail('screen mode: %s' % mode)
print('\n'.join(json.dumps(o) for o in resumed))
service.terminate()
if service.wait(timeout=10) != 0:
    fail('the service did not exit 0 on SIGTERM')
print('OK')
