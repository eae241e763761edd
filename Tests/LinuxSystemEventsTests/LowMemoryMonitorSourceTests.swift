import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// Memory warnings from low-memory-monitor, against python-dbusmock's own
/// `low_memory_monitor` template on a private bus with a system bus's
/// policy: the daemon's warnings reach the app, an unprivileged peer's
/// forged ones do not, and a daemon that restarts is followed.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2)),
       .enabled(if: UnprivilegedPeer.available, "root and setpriv are needed to act as nobody"))
struct LowMemoryMonitorSourceTests {
    static let service = "org.freedesktop.LowMemoryMonitor"
    static let path = "/org/freedesktop/LowMemoryMonitor"

    /// A rig, launched, recording each memory warning the app's engine saw
    /// and each level the source reported.
    static func launchedRig(_ bus: PrivateSystemBus) throws -> (HostileBusTests.Rig, Locked<[String]>) {
        let rig = try HostileBusTests.Rig(bus: bus)
        let warnings = Locked<[String]>([])
        try rig.onLoop { rig in
            _ = rig.application.addEngineObserver { event in
                if case .memoryWarning(let deliveredToApp) = event {
                    warnings.mutate { $0.append("warning, delivered to the app: \(deliveredToApp)") }
                }
            }
            rig.sources.onLowMemoryWarning = { level in warnings.mutate { $0.append("level \(level)") } }
            try rig.application.perform(.launch)
        }
        return (rig, warnings)
    }

    /// Emits warnings through the daemon until the first one arrives (the
    /// source subscribes once it has found the daemon's owner).
    static func emitUntilHeard(_ bus: PrivateSystemBus, _ warnings: Locked<[String]>, level: Int) throws -> Bool {
        for _ in 0..<50 {
            try bus.mock(service, path, "EmitWarning", "y", ["\(level)"])
            if eventually(timeout: 0.2, { warnings.value.contains("level \(level)") }) { return true }
        }
        return false
    }

    @Test func theDaemonsWarningsReachTheAppAndForgedOnesDoNot() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try bus.startMock("low_memory_monitor", name: Self.service)
        let (rig, warnings) = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        #expect(try Self.emitUntilHeard(bus, warnings, level: 100), "\(rig.problems.value)")
        #expect(warnings.value.contains("warning, delivered to the app: true"))
        warnings.mutate { $0.removeAll() }

        let me = try #require(rig.uniqueName)
        for destination in ["-", me] {
            try HostileBusTests.spoof(bus, ["warning", "255", destination, "3"])
        }
        // Below the lowest level: not a warning.
        try bus.mock(Self.service, Self.path, "EmitWarning", "y", ["10"])
        try bus.mock(Self.service, Self.path, "EmitWarning", "y", ["50"])
        #expect(eventually(timeout: 5) { warnings.value.contains("level 50") }, "\(warnings.value)")
        #expect(warnings.value == ["warning, delivered to the app: true", "level 50"],
                "only the daemon's warning at or above 50: \(warnings.value)")
    }

    @Test func aRestartedDaemonIsFollowed() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try bus.startMock("low_memory_monitor", name: Self.service)
        let (rig, warnings) = try Self.launchedRig(bus)
        defer { try? rig.stop() }
        #expect(try Self.emitUntilHeard(bus, warnings, level: 100))
        bus.stopMock("low_memory_monitor", name: Self.service)
        try bus.startMock("low_memory_monitor", name: Self.service)
        #expect(try Self.emitUntilHeard(bus, warnings, level: 255), "\(rig.problems.value)")
    }
}
