"""Sends D-Bus signals for MainLoop's hostile-bus tests, as whoever runs it
(the tests run it as `nobody` through setpriv, an unprivileged peer on a bus
with a system bus's policy, or as root to speak through a dbusmock daemon).

    spoof.py ADDRESS COMMAND...

Commands (DEST: a unique name to address the signal to, '-' to broadcast, or
'*' to send one to every connection on the bus):
    properties PATH INTERFACE JSON DEST     PropertiesChanged(INTERFACE, JSON, [])
    owner NAME OLD NEW DEST COUNT           NameOwnerChanged(NAME, OLD, NEW), COUNT times
    sleep BOOL DEST COUNT                   logind's PrepareForSleep(BOOL), COUNT times
    warning LEVEL DEST COUNT                low-memory-monitor's LowMemoryWarning(LEVEL), COUNT times
    owner-emit SERVICE PATH INTERFACE MEMBER SIGNATURE JSON-ARGS COUNT
        the daemon owning SERVICE emits the signal itself (dbusmock's EmitSignal)
    owner-properties SERVICE PATH INTERFACE JSON
        the daemon owning SERVICE emits PropertiesChanged(INTERFACE, JSON, [])
    owner-huge SERVICE PATH INTERFACE ENTRIES
        the daemon owning SERVICE emits a PropertiesChanged of ENTRIES properties

Every signal is sent, then the bus is asked for its id: the bus has routed
them all before the script exits.
"""
import json
import sys

import dbus
import dbus.lowlevel


def variant(value):
    if isinstance(value, bool):
        return dbus.Boolean(value, variant_level=1)
    if isinstance(value, float):
        return dbus.Double(value, variant_level=1)
    if isinstance(value, int):
        return dbus.UInt32(value, variant_level=1)
    return dbus.String(value, variant_level=1)


def send(bus, path, interface, member, signature, args, destination):
    if destination == '*':
        names = bus.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                                  'ListNames', '', ())
        for name in names:
            if name.startswith(':') and name != bus.get_unique_name():
                send(bus, path, interface, member, signature, args, str(name))
        return
    message = dbus.lowlevel.SignalMessage(path, interface, member)
    message.append(signature=signature, *args)
    if destination != '-':
        message.set_destination(destination)
    bus.send_message(message)


def owner_properties_changed(bus, service, path, interface, changed):
    """Has the daemon owning `service` emit PropertiesChanged itself."""
    mock = bus.get_object(service, path)
    mock.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                    [interface, changed, dbus.Array([], signature='s')],
                    dbus_interface='org.freedesktop.DBus.Mock', timeout=120)


def main():
    address, command, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    bus = dbus.bus.BusConnection(address)
    if command == 'properties':
        path, interface, properties, destination = rest
        changed = dbus.Dictionary({k: variant(v) for k, v in json.loads(properties).items()}, signature='sv')
        send(bus, path, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
             [interface, changed, dbus.Array([], signature='s')], destination)
    elif command == 'owner':
        name, old, new, destination, count = rest
        for _ in range(int(count)):
            send(bus, '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'NameOwnerChanged', 'sss',
                 [name, old, new], destination)
    elif command == 'sleep':
        value, destination, count = rest
        for _ in range(int(count)):
            send(bus, '/org/freedesktop/login1', 'org.freedesktop.login1.Manager', 'PrepareForSleep', 'b',
                 [value == 'true'], destination)
    elif command == 'warning':
        level, destination, count = rest
        for _ in range(int(count)):
            send(bus, '/org/freedesktop/LowMemoryMonitor', 'org.freedesktop.LowMemoryMonitor', 'LowMemoryWarning', 'y',
                 [dbus.Byte(int(level))], destination)
    elif command == 'owner-emit':
        service, path, interface, member, signature, args, count = rest
        mock = bus.get_object(service, path)
        for _ in range(int(count)):
            mock.EmitSignal(interface, member, signature, json.loads(args), dbus_interface='org.freedesktop.DBus.Mock')
    elif command == 'owner-properties':
        service, path, interface, properties = rest
        changed = dbus.Dictionary({k: variant(v) for k, v in json.loads(properties).items()}, signature='sv')
        owner_properties_changed(bus, service, path, interface, changed)
    elif command == 'owner-huge':
        service, path, interface, entries = rest
        changed = dbus.Dictionary({'Key%07d' % i: dbus.String('v', variant_level=1) for i in range(int(entries))},
                                  signature='sv')
        owner_properties_changed(bus, service, path, interface, changed)
    else:
        sys.exit('unknown command %s' % command)
    bus.flush()
    bus.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetId', '', ())


main()
