import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// The D-Bus sources on a bus whose policy is a system bus's (only root
/// owns the daemons' names; anyone may send signals), attacked by an
/// unprivileged peer: `nobody`, through `setpriv`, sending with python-dbus
/// (Tests/HostileBus/spoof.py). The daemons are python-dbusmock's
/// templates, run as root. Each test first shows that the attack's channel
/// is live (a real change after the attack arrives), so a quiet service
/// cannot pass by hearing nothing.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2)), .enabled(if: UnprivilegedPeer.available, "root and setpriv are needed to act as nobody"))
struct HostileBusTests {
    static let displayDevice = "/org/freedesktop/UPower/devices/DisplayDevice"
    static let session = "/org/freedesktop/login1/session/c1"

    /// The rig of SystemBusSourcesTests: an app with the D-Bus sources on a
    /// loop thread, recording notifications, wake-ups and problems.
    typealias Rig = SystemBusSourcesTests.Rig

    /// Runs Tests/HostileBus/spoof.py on `bus`, as `nobody` or as root.
    static func spoof(_ bus: PrivateSystemBus, asNobody: Bool = true, _ arguments: [String]) throws {
        let script = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HostileBus/spoof.py").path
        let command = ["/usr/bin/python3", script, bus.address] + arguments
        let result = asNobody
            ? try runToCompletion("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] + command)
            : try runToCompletion(command[0], Array(command.dropFirst()))
        guard result.status == 0 else { throw TestFailure("spoof.py \(arguments.prefix(2)) failed: \(result.error)") }
    }

    /// The daemons of SystemBusSourcesTests (80 % discharging, portrait,
    /// session c1 unlocked), a rig on them, launched, initial values read.
    static func launchedRig(_ bus: PrivateSystemBus, callTimeout: Duration = .seconds(5)) throws -> Rig {
        try SystemBusSourcesTests.startDaemons(bus)
        let rig = try Rig(bus: bus, callTimeout: callTimeout)
        guard eventually(timeout: 10, {
            rig.value(.batteryLevel) == .number(0.8) && rig.value(.orientation) == "portrait"
                && rig.value(.protectedData) == "available" && rig.uniqueName != nil
        }) else { throw TestFailure("the initial values were not read: \(rig.problems.value)") }
        try rig.onLoop { try $0.application.perform(.launch) }
        return rig
    }

    /// How many times UPower's mock was asked for its display device.
    static func displayDeviceLookups(_ bus: PrivateSystemBus) throws -> Int {
        let calls = try bus.busctl(["--json=short", "call", "org.freedesktop.UPower", "/org/freedesktop/UPower",
                                    "org.freedesktop.DBus.Mock", "GetCalls"])
        return calls.components(separatedBy: "\"GetDisplayDevice\"").count - 1
    }

    @Test func broadcastAndUnicastSpoofsOfPropertiesAreIgnored() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        try SystemBusSourcesTests.setLocked(bus, true)
        #expect(eventually(timeout: 5) { rig.value(.protectedData) == "unavailable" })
        let me = try #require(rig.uniqueName)
        for destination in ["-", me] {
            try Self.spoof(bus, ["properties", Self.displayDevice, "org.freedesktop.UPower.Device",
                                 #"{"Percentage": 3.0, "State": 1}"#, destination])
            try Self.spoof(bus, ["properties", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
                                 #"{"AccelerometerOrientation": "left-up"}"#, destination])
            try Self.spoof(bus, ["properties", Self.session, "org.freedesktop.login1.Session", #"{"LockedHint": false}"#, destination])
        }
        // The channel is live: the real daemon's change after the spoofs arrives.
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.7}"#) }, "\(rig.notes.value)")
        #expect(rig.value(.orientation) == "portrait")
        #expect(rig.value(.protectedData) == "unavailable")
        #expect(rig.value(.batteryState) == "unplugged")
        let notes = rig.notes.value
        #expect(!notes.contains { $0.contains("0.03") || $0.contains("orientation") || $0.contains("BecomeAvailable") }, "\(notes)")
    }

    @Test func forgedOwnerChangesAreIgnored() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        let me = try #require(rig.uniqueName)
        let lookups = try Self.displayDeviceLookups(bus)
        let logind = try bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                     "GetNameOwner", "s", "org.freedesktop.login1"]).split(separator: "\"")[1]
        for destination in [me, "-"] {
            try Self.spoof(bus, ["owner", "org.freedesktop.UPower", "", ":1.999", destination, "50"])
            try Self.spoof(bus, ["owner", "org.freedesktop.login1", String(logind), "", destination, "1"])
        }
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.7}"#) }, "\(rig.notes.value)")
        #expect(try Self.displayDeviceLookups(bus) == lookups, "a forged owner change made the service ask UPower again")
        #expect(rig.value(.protectedData) == "available", "a forged departure of logind")
        #expect(!rig.sawProblem("left the bus"), "\(rig.problems.value)")
    }

    @Test func wakeSignalsFromAnyoneButLogindAreIgnoredAndLogindsAreRateLimited() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        let me = try #require(rig.uniqueName)
        try Self.spoof(bus, ["sleep", "false", "-", "300"])
        try Self.spoof(bus, ["sleep", "false", me, "300"])
        // logind's own: a flood runs the wake work twice (at once, and once
        // at the end of the interval), not once per signal.
        try Self.spoof(bus, asNobody: false, ["owner-emit", "org.freedesktop.login1", "/org/freedesktop/login1",
                                              "org.freedesktop.login1.Manager", "PrepareForSleep", "b", "[false]", "50"])
        #expect(eventually(timeout: 5) { rig.wakes.value == 2 }, "wakes: \(rig.wakes.value)")
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.7}"#) })
        #expect(rig.wakes.value == 2)
    }

    @Test func anOversizeSignalFromTheOwnerIsRefusedBeforeItIsBuilt() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        try Self.spoof(bus, asNobody: false, ["owner-huge", "org.freedesktop.UPower", Self.displayDevice,
                                              "org.freedesktop.UPower.Device", "100000"])
        #expect(eventually(timeout: 20) { rig.sawProblem("too large") }, "\(rig.problems.value)")
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.7}"#) })
    }

    @Test func aWronglyTypedValueIsNamedAndIgnored() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        try Self.spoof(bus, asNobody: false, ["owner-properties", "org.freedesktop.UPower", Self.displayDevice,
                                              "org.freedesktop.UPower.Device", #"{"Percentage": "12"}"#])
        #expect(eventually(timeout: 5) { rig.sawProblem("Percentage is string, not double; ignored") }, "\(rig.problems.value)")
        #expect(rig.value(.batteryLevel) == .number(0.8))
    }

    /// A daemon that answers nothing for longer than the call timeout is
    /// asked again; meanwhile protected data stays closed.
    @Test func stalledDaemonsAreAskedAgainAndProtectedDataFailsClosed() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try SystemBusSourcesTests.startDaemons(bus)
        try SystemBusSourcesTests.setLocked(bus, true)
        bus.signalMock("upower", SIGSTOP)
        bus.signalMock("logind", SIGSTOP)
        defer {
            bus.signalMock("upower", SIGCONT)
            bus.signalMock("logind", SIGCONT)
        }
        let rig = try Rig(bus: bus, callTimeout: .milliseconds(300))
        defer { try? rig.stop() }
        #expect(rig.value(.protectedData) == "unavailable", "closed until logind answers")
        #expect(eventually(timeout: 10) { rig.sawProblem("battery: org.freedesktop.UPower: org.freedesktop.UPower.GetDisplayDevice had no reply in time") },
                "\(rig.problems.value)")
        #expect(rig.value(.protectedData) == "unavailable")
        bus.signalMock("upower", SIGCONT)
        bus.signalMock("logind", SIGCONT)
        #expect(eventually(timeout: 10) { rig.value(.batteryLevel) == .number(0.8) }, "read once UPower answers: \(rig.problems.value)")
        try SystemBusSourcesTests.setLocked(bus, false)
        #expect(eventually(timeout: 10) { rig.value(.protectedData) == "available" })
    }

    /// A display device path that is no object path (here a string with a
    /// quote, once spliced into a match rule) is refused; the bus stays
    /// open for the other sources.
    @Test func aMalformedObjectPathIsRefusedAndTheBusStaysOpen() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try SystemBusSourcesTests.startDaemons(bus)
        try bus.mock("org.freedesktop.UPower", "/org/freedesktop/UPower", "AddMethod", "sssss",
                     ["org.freedesktop.UPower", "GetDisplayDevice", "", "s", "ret = \"/org/x'y\""])
        let rig = try Rig(bus: bus)
        defer { try? rig.stop() }
        #expect(eventually(timeout: 10) { rig.sawProblem("GetDisplayDevice") || rig.sawProblem("not (o)") }, "\(rig.problems.value)")
        try SystemBusSourcesTests.setLocked(bus, true)
        #expect(eventually(timeout: 5) { rig.value(.protectedData) == "unavailable" }, "logind still followed")
        try SystemBusSourcesTests.setOrientation(bus, "left-up")
        #expect(eventually(timeout: 5) { rig.value(.orientation) == "landscapeRight" }, "the sensors still followed")
        #expect(try rig.onLoop { $0.sources.connection?.isOpen } == true)
        #expect(!rig.sawProblem("went away"), "\(rig.problems.value)")
    }

    /// The bus restarts at the same address: the sources connect again and
    /// follow the daemons that come back; protected data is closed meanwhile.
    @Test func aRestartedBusIsConnectedToAgain() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        try bus.restartDaemon()
        #expect(eventually(timeout: 5) { rig.value(.protectedData) == "unavailable" }, "closed while the bus is away")
        try SystemBusSourcesTests.startDaemons(bus)
        #expect(eventually(timeout: 15) { (try? rig.onLoop { $0.sources.reconnections }) == 1 }, "\(rig.problems.value)")
        try SystemBusSourcesTests.setBattery(bus, percentage: 55)
        #expect(eventually(timeout: 10) { rig.value(.batteryLevel) == .number(0.55) }, "\(rig.problems.value)")
        #expect(eventually(timeout: 10) { rig.value(.protectedData) == "available" })
    }
}

/// Whether the tests can start the daemons as root and a peer as `nobody`.
enum UnprivilegedPeer {
    static let available = getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0
}

/// The pieces the hostile-bus fixes rest on, without a bus.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct BusInputValidationTests {
    @Test func matchRuleValuesAreQuotedSoAPeersTextCannotEndThem() {
        let rule = DBusMatchRule(sender: ":1.7", path: "/a", member: "PropertiesChanged", arguments: [0: "x',member='Evil"])
        #expect(rule.text == #"type='signal',sender=':1.7',path='/a',member='PropertiesChanged',arg0='x'\'',member='\''Evil'"#)
    }

    @Test func objectPathsAndUniqueNamesFollowTheSpecification() {
        for path in ["/", "/org/freedesktop/UPower", "/a_b/c9"] { #expect(DBusSyntax.isObjectPath(path), "\(path)") }
        for path in ["", "not a path", "/a/", "//a", "/a//b", "/org/x'y", "/a-b", "a/b"] {
            #expect(!DBusSyntax.isObjectPath(path), "\(path)")
        }
        for name in [":1.42", ":1.0", ":a-b.c_d"] { #expect(DBusSyntax.isUniqueName(name), "\(name)") }
        for name in ["", ":1", "org.freedesktop.UPower", ":1..2", ":1.4 2"] { #expect(!DBusSyntax.isUniqueName(name), "\(name)") }
    }

    @Test func anUnparseableBusAddressIsNamedAsSuch() throws {
        for address in ["garbage", "unix", "unix:path", ":path=/x", "unix:path=/a b"] {
            #expect(DBusSyntax.addressProblem(address) != nil, "\(address)")
        }
        for address in ["unix:path=/run/dbus/system_bus_socket", "unix:abstract=x,guid=0f;tcp:host=127.0.0.1,port=1"] {
            #expect(DBusSyntax.addressProblem(address) == nil, "\(address)")
        }
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let reason = try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            return SystemBusSources(center: application.notifications, logger: Logger(label: "test"), address: "garbage")
                .unavailableReason
        }
        #expect(reason?.contains("'garbage' is not a D-Bus address") == true, "\(reason ?? "nil")")
    }

    @Test func propertiesOfTheWrongKindAreNamed() {
        let (accepted, problems) = UPowerSource.schema.accept(["Percentage": .string("80"), "State": .uint(2), "Vendor": .string("x")])
        #expect(accepted == ["State": .uint(2)])
        #expect(problems == ["Percentage is string, not double; ignored"])
    }
}
