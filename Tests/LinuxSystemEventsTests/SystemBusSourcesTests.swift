import Foundation
import Glibc
import MainLoopKit
@testable import SystemBus
import Testing
import TestSupport

/// Libsystemd is opened on first use, not linked. A
/// missing library, or one without a function MainLoop calls, is named.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SystemdLibraryTests {
    @Test func aMissingOrWrongLibraryIsNamed() {
        let missing = SystemdLibrary.problem(loading: "/nonexistent/libsystemd.so.0")
        #expect(missing?.contains("cannot load /nonexistent/libsystemd.so.0") == true, "\(missing ?? "nil")")
        let wrong = SystemdLibrary.problem(loading: "libc.so.6")
        #expect(wrong == "libc.so.6 has no sd_bus_new (libsystemd too old?)", "\(wrong ?? "nil")")
        #expect(SystemdLibrary.problem(loading: "libsystemd.so.0") == nil)
    }
}

/// The mapping tables, pinned.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SystemBusMappingTests {
    @Test func upowerStatesAndLevels() {
        let states: [Int64: BatteryState] = [0: .unknown, 1: .charging, 2: .unplugged, 3: .unplugged, 4: .full,
                                             5: .charging, 6: .unplugged, 7: .unknown]
        for (upower, expected) in states { #expect(UPowerSource.batteryState(upowerState: upower) == expected, "State \(upower)") }
        #expect(UPowerSource.events(from: ["Percentage": .double(80), "State": .uint(2)])
                == [.batteryLevel(0.8), .batteryState(.unplugged)])
        #expect(UPowerSource.events(from: ["Percentage": .double(150)]) == [.batteryLevel(1)])
        #expect(UPowerSource.events(from: ["IsPresent": .bool(false), "Percentage": .double(0)]) == [.batteryState(.unknown)])
    }

    /// Landscape named from the device's point of view, as UIKit does:
    /// landscapeLeft has the device's right edge up (home edge on the right).
    @Test func sensorProxyOrientations() {
        let table: [String: DeviceOrientation] = ["normal": .portrait, "bottom-up": .portraitUpsideDown,
                                                  "right-up": .landscapeLeft, "left-up": .landscapeRight,
                                                  "undefined": .unknown, "sideways": .unknown]
        for (value, expected) in table { #expect(SensorProxySource.orientation(accelerometer: value) == expected, "\(value)") }
        #expect(SensorProxySource.events(from: ["HasProximity": .bool(true), "ProximityNear": .bool(true)]) == [.proximity(true)])
        #expect(SensorProxySource.events(from: ["HasAccelerometer": .bool(false), "AccelerometerOrientation": .string("normal")]).isEmpty)
    }

    @Test func logindLockedHint() {
        #expect(LogindSource.events(from: ["LockedHint": .bool(true)]) == [.protectedData(available: false)])
        #expect(LogindSource.events(from: ["LockedHint": .bool(false)]) == [.protectedData(available: true)])
        #expect(LogindSource.events(from: ["Active": .bool(true)]).isEmpty)
    }
}

/// The D-Bus sources against python-dbusmock's upower, iio-sensors-proxy
/// and logind templates on a private `dbus-daemon`: initial
/// values as the baseline, live changes, held changes merged on foreground
/// (net zero dropped), a daemon restarted mid-run, and no bus at all.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2))) struct SystemBusSourcesTests {
    static let mock = "org.freedesktop.DBus.Mock"

    /// An app with the D-Bus sources on a loop thread, recording
    /// notifications, wake-ups and problems.
    final class Rig: Sendable {
        let thread: LoopThread
        /// The application and the sources, reached only on the loop thread.
        let parts: LoopBoundBox<[AnyObject]?>
        let notes = Locked<[String]>([])
        let wakes = Locked(0)
        let problems = Locked<[String]>([])

        init(bus: PrivateSystemBus, session: String? = "c1", callTimeout: Duration = .seconds(5)) throws {
            thread = try LoopThread.start()
            parts = LoopBoundBox<[AnyObject]?>.makeEmpty(loop: thread.loop)
            let notes = self.notes, wakes = self.wakes, problems = self.problems
            let address = bus.address
            try OffLoopReleaseTests.onLoop(thread) { [thread, parts] in
                let application = try Application(loop: thread.loop)
                try application.notifications.addObserver { note in notes.mutate { $0.append("\(note)") } }
                let sources = SystemBusSources(center: application.notifications, logger: Logger(label: "test"),
                                               address: address, sessionID: session, callTimeout: callTimeout)
                sources.onWake = { wakes.mutate { $0 += 1 } }
                sources.onProblem = { problem in problems.mutate { $0.append(problem) } }
                parts.value = [application, sources]
            }
        }

        var application: Application { parts.value![0] as! Application }
        var sources: SystemBusSources { parts.value![1] as! SystemBusSources }

        func onLoop<Value>(_ body: @escaping @Sendable (Rig) throws -> Value) throws -> Value {
            try OffLoopReleaseTests.onLoop(thread) { [self] in try body(self) }
        }

        func value(_ kind: NotificationKind) -> JSONValue? {
            try? onLoop { try $0.application.notifications.currentValue(of: kind) }
        }

        /// The service's unique name on the bus, once it has one.
        var uniqueName: String? { try? onLoop { $0.sources.connection?.uniqueName } }

        func sawProblem(_ text: String) -> Bool { problems.value.contains { $0.contains(text) } }

        func stop() throws {
            try onLoop { $0.parts.value = nil }
            try thread.stopAndJoin()
        }
    }

    /// The three mocks, set up as a battery at 80 % discharging, a portrait
    /// device, proximity far and an unlocked session `c1`.
    static func startDaemons(_ bus: PrivateSystemBus) throws {
        try bus.startMock("upower", name: "org.freedesktop.UPower")
        try bus.mock("org.freedesktop.UPower", "/org/freedesktop/UPower", "SetupDisplayDevice", "uuddddxxbsu",
                     ["2", "2", "80", "40", "50", "10", "14400", "0", "true", "battery-good-symbolic", "1"])
        try bus.startMock("iio-sensors-proxy", name: "net.hadess.SensorProxy",
                          parameters: #"{"has_accelerometer":true,"accelerometer_orientation":"normal","has_proximity":true,"proximity_near":false}"#)
        try bus.startMock("logind", name: "org.freedesktop.login1")
        try bus.mock("org.freedesktop.login1", "/org/freedesktop/login1", "AddSession", "ssusb", ["c1", "seat0", "1000", "user", "true"])
    }

    static func setBattery(_ bus: PrivateSystemBus, percentage: Double) throws {
        try bus.mock("org.freedesktop.UPower", "/org/freedesktop/UPower", "SetDeviceProperties", "oa{sv}",
                     ["/org/freedesktop/UPower/devices/DisplayDevice", "1", "Percentage", "d", "\(percentage)"])
    }

    static func setOrientation(_ bus: PrivateSystemBus, _ value: String) throws {
        try bus.mock("net.hadess.SensorProxy", "/net/hadess/SensorProxy", "SetInternalProperty", "ssv",
                     ["net.hadess.SensorProxy", "AccelerometerOrientation", "s", value])
    }

    static func setProximity(_ bus: PrivateSystemBus, near: Bool) throws {
        try bus.mock("net.hadess.SensorProxy", "/net/hadess/SensorProxy", "SetInternalProperty", "ssv",
                     ["net.hadess.SensorProxy", "ProximityNear", "b", near ? "true" : "false"])
    }

    static func setLocked(_ bus: PrivateSystemBus, _ locked: Bool) throws {
        try bus.busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1/session/c1",
                        "org.freedesktop.login1.Session", "SetLockedHint", "b", locked ? "true" : "false"])
    }

    @Test func initialValuesLiveChangesAndOneMergedNotificationPerKind() throws {
        let bus = try PrivateSystemBus()
        try Self.startDaemons(bus)
        let rig = try Rig(bus: bus)
        defer { try? rig.stop() }
        // The values read at start are the baseline, not notifications.
        #expect(eventually(timeout: 10) {
            rig.value(.batteryLevel) == .number(0.8) && rig.value(.orientation) == "portrait"
                && rig.value(.protectedData) == "available"
        }, "initial values: \(String(describing: rig.value(.batteryLevel))) \(String(describing: rig.value(.orientation)))")
        try rig.onLoop { try $0.application.perform(.launch) }
        #expect(rig.notes.value.isEmpty, "no notification for the baseline: \(rig.notes.value)")

        // Live: reaches the active app.
        try Self.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.7}"#) }, "\(rig.notes.value)")
        rig.notes.mutate { $0.removeAll() }

        // Suspended: several changes per kind, and a net-zero proximity flip.
        try rig.onLoop { try $0.application.perform(.home) }
        try Self.setBattery(bus, percentage: 60)
        try Self.setBattery(bus, percentage: 50)
        try Self.setOrientation(bus, "left-up")
        try Self.setOrientation(bus, "right-up")
        try Self.setProximity(bus, near: true)
        try Self.setProximity(bus, near: false)
        try Self.setLocked(bus, true)
        #expect(eventually(timeout: 10) {
            rig.value(.batteryLevel) == .number(0.5) && rig.value(.orientation) == "landscapeLeft"
                && rig.value(.protectedData) == "unavailable" && rig.value(.proximity) == false
        }, "the held changes arrived")
        #expect(rig.notes.value.isEmpty, "nothing reached the suspended app: \(rig.notes.value)")
        try rig.onLoop { try $0.application.perform(.foreground) }
        let merged = rig.notes.value
        #expect(merged.count == 3, "\(merged)")
        #expect(merged.contains(#"batteryLevelDidChange {"level":0.5} (merged from 2)"#), "\(merged)")
        #expect(merged.contains(#"orientationDidChange {"orientation":"landscapeLeft"} (merged from 2)"#), "\(merged)")
        #expect(merged.contains { $0.hasPrefix("protectedDataWillBecomeUnavailable") || $0.contains("protectedData") }, "\(merged)")
        #expect(!merged.contains { $0.contains("proximity") }, "net zero: \(merged)")
    }

    @Test func aDaemonRestartedMidRunIsReadAgain() throws {
        let bus = try PrivateSystemBus()
        try Self.startDaemons(bus)
        let rig = try Rig(bus: bus)
        defer { try? rig.stop() }
        #expect(eventually(timeout: 10) { rig.value(.batteryLevel) == .number(0.8) })
        try rig.onLoop { try $0.application.perform(.launch) }
        bus.stopMock("upower", name: "org.freedesktop.UPower")
        try bus.startMock("upower", name: "org.freedesktop.UPower")
        try bus.mock("org.freedesktop.UPower", "/org/freedesktop/UPower", "SetupDisplayDevice", "uuddddxxbsu",
                     ["2", "1", "35", "40", "50", "10", "14400", "0", "true", "battery-low-symbolic", "1"])
        try Self.setBattery(bus, percentage: 35)
        #expect(eventually(timeout: 10) { rig.notes.value.contains(#"batteryLevelDidChange {"level":0.35}"#) },
                "the restarted daemon's value: \(rig.notes.value)")
    }

    @Test func withNoBusTheSourcesAreOffAndNothingFails() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let reason = try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            let sources = SystemBusSources(center: application.notifications, logger: Logger(label: "test"),
                                           address: "unix:path=/nonexistent/bus")
            return sources.unavailableReason
        }
        #expect(reason?.contains("no system bus") == true, "\(String(describing: reason))")
    }
}

/// `mainloop run` with the D-Bus sources on by default, end to
/// end: a real service process on a private bus with python-dbusmock's
/// daemons, driven by `busctl` and the control socket.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2))) struct SystemBusServiceTests {
    /// The observation lines the service printed so far.
    static func lines(_ file: String) -> [String] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func theServiceFollowsTheDaemonsAndMergesWhileSuspended() throws {
        let bus = try PrivateSystemBus()
        try SystemBusSourcesTests.startDaemons(bus)
        let directory = TemporaryDirectory()
        let output = directory.file("observations")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let service = try ServiceProcess(directory: directory, standardOutput: FileHandle(forWritingAtPath: output)!,
                                         environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_SESSION_ID": "c1"])
        #expect(service.firstOKReply(within: 5) != nil)
        #expect(eventually(timeout: 10) {
            (try? ControlClient.send(["query": "values"], to: service.socket))?["values"]?.objectValue?["batteryLevel"] == .number(0.8)
        }, "the battery level read at start")
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { Self.lines(output).contains { $0.contains("batteryLevelDidChange") && $0.contains("0.7") } },
                "a live change reached the active app")
        #expect(try ControlClient.send(["lifecycle": "home"], to: service.socket)["state"] == .string("suspended"))
        try SystemBusSourcesTests.setBattery(bus, percentage: 60)
        try SystemBusSourcesTests.setOrientation(bus, "bottom-up")
        try SystemBusSourcesTests.setLocked(bus, true)
        #expect(eventually(timeout: 10) {
            let values = (try? ControlClient.send(["query": "values"], to: service.socket))?["values"]?.objectValue
            return values?["batteryLevel"] == .number(0.6) && values?["orientation"] == "portraitUpsideDown"
                && values?["protectedData"] == "unavailable"
        }, "the held changes reached the center")
        let before = Self.lines(output).count
        #expect(try ControlClient.send(["lifecycle": "foreground"], to: service.socket)["state"] == .string("active"))
        #expect(eventually(timeout: 5) { Self.lines(output).dropFirst(before).contains { $0.contains("didBecomeActive") } })
        let resumed = Array(Self.lines(output).dropFirst(before))
        let notifications = resumed.filter { $0.contains(#""notification""#) }
        #expect(notifications.count == 3, "\(resumed)")
        let enter = resumed.firstIndex { $0.contains("willEnterForeground") } ?? -1
        let active = resumed.firstIndex { $0.contains("didBecomeActive") } ?? -1
        let positions = notifications.compactMap { line in resumed.firstIndex(of: line) }
        #expect(positions.allSatisfy { $0 > enter && $0 < active }, "between willEnterForeground and didBecomeActive: \(resumed)")
        #expect(Self.mapsLibsystemd(service), "sd-bus was loaded for the bus sources")
        #expect(service.terminate() == 0)
    }

    /// The service on a bus with a system bus's policy: what an
    /// unprivileged peer sends as UPower, iio-sensor-proxy or logind,
    /// broadcast or addressed to the service, changes nothing it reports.
    @Test(.enabled(if: UnprivilegedPeer.available, "root and setpriv are needed to act as nobody"))
    func theServiceBelievesOnlyTheDaemons() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try SystemBusSourcesTests.startDaemons(bus)
        try SystemBusSourcesTests.setLocked(bus, true)
        let service = try ServiceProcess(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_SESSION_ID": "c1"])
        defer { _ = service.terminate() }
        #expect(service.firstOKReply(within: 5) != nil)
        func values() -> JSONObject? {
            let reply = try? ControlClient.send(["query": "values"], to: service.socket)
            return reply?["values"]?.objectValue
        }
        #expect(eventually(timeout: 10) { values()?["batteryLevel"] == .number(0.8) && values()?["protectedData"] == "unavailable" })
        for destination in ["-", "*"] {
            try HostileBusTests.spoof(bus, ["properties", HostileBusTests.displayDevice, "org.freedesktop.UPower.Device",
                                            #"{"Percentage": 3.0, "State": 1}"#, destination])
            try HostileBusTests.spoof(bus, ["properties", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
                                            #"{"AccelerometerOrientation": "left-up"}"#, destination])
            try HostileBusTests.spoof(bus, ["properties", HostileBusTests.session, "org.freedesktop.login1.Session",
                                            #"{"LockedHint": false}"#, destination])
            try HostileBusTests.spoof(bus, ["owner", "org.freedesktop.login1", "", ":1.999", destination, "20"])
        }
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually(timeout: 5) { values()?["batteryLevel"] == .number(0.7) }, "the real change arrives")
        let after = values()
        #expect(after?["orientation"] == "portrait")
        #expect(after?["protectedData"] == "unavailable")
        #expect(after?["batteryState"] == "unplugged")
    }

    /// Libsystemd (and the six libraries it brings) is
    /// loaded when the D-Bus sources start, never at start-up: a service
    /// without them does not map it at all.
    @Test func withTheBusSourcesOffLibsystemdIsNeverLoaded() throws {
        let service = try ServiceProcess(extraArguments: ["--no-system-bus"])
        #expect(service.firstOKReply(within: 5)?["state"] == .string("active"))
        #expect(!Self.mapsLibsystemd(service))
        #expect(service.terminate() == 0)
    }

    /// Whether the service's process has libsystemd mapped.
    static func mapsLibsystemd(_ service: ServiceProcess) -> Bool {
        // Read to the end (a /proc file has no size to read up to).
        let file = FileHandle(forReadingAtPath: "/proc/\(service.process.processIdentifier)/maps")
        let maps = String(decoding: (try? file?.readToEnd()) ?? Data(), as: UTF8.self)
        #expect(maps.contains("r-xp"), "the process's maps were read")
        return maps.contains("libsystemd.so")
    }

    @Test func withNoBusTheServiceStartsAndAnswers() throws {
        let service = try ServiceProcess(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket"])
        #expect(service.firstOKReply(within: 5)?["state"] == .string("active"))
        #expect(service.terminate() == 0)
    }
}
