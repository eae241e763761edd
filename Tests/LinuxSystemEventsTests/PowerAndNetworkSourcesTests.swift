import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// Low power mode (power-profiles-daemon) and the network path
/// (NetworkManager) against python-dbusmock's own templates on a private
/// bus with a system bus's policy: values read at start as the baseline,
/// live changes, held changes merged on resume, and an unprivileged peer's
/// spoofs ignored.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2)),
       .enabled(if: UnprivilegedPeer.available, "root and setpriv are needed to act as nobody"))
struct PowerAndNetworkSourcesTests {
    static let profiles = "/net/hadess/PowerProfiles"

    /// power-saver and a captive portal at start.
    static func startDaemons(_ bus: PrivateSystemBus) throws {
        try bus.startMock("power_profiles_daemon", name: "net.hadess.PowerProfiles", parameters: #"{"ActiveProfile": "power-saver"}"#)
        try bus.startMock("networkmanager", name: "org.freedesktop.NetworkManager")
        try setConnectivity(bus, 2)
    }

    static func setProfile(_ bus: PrivateSystemBus, _ profile: String) throws {
        try bus.busctl(["set-property", "net.hadess.PowerProfiles", profiles, "net.hadess.PowerProfiles",
                        "ActiveProfile", "s", profile])
    }

    /// NetworkManager's `Connectivity` (1 none, 2 portal, 3 limited, 4 full).
    static func setConnectivity(_ bus: PrivateSystemBus, _ value: Int) throws {
        try bus.mock("org.freedesktop.NetworkManager", "/org/freedesktop", "SetConnectivity", "u", ["\(value)"])
    }

    @Test func readAtStartFollowedAndMergedWhileSuspended() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try Self.startDaemons(bus)
        let rig = try HostileBusTests.Rig(bus: bus)
        defer { try? rig.stop() }
        #expect(eventually(timeout: 10) {
            rig.value(.lowPowerMode) == true && rig.value(.networkPath) == "requiresConnection"
        }, "initial values: \(rig.problems.value)")
        try rig.onLoop { try $0.application.perform(.launch) }
        #expect(rig.notes.value.isEmpty, "the values read at start are the baseline: \(rig.notes.value)")

        try Self.setProfile(bus, "balanced")
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"powerStateDidChange {"lowPowerMode":false}"#) },
                "\(rig.notes.value)")
        rig.notes.mutate { $0.removeAll() }

        try rig.onLoop { try $0.application.perform(.home) }
        try Self.setConnectivity(bus, 1)
        try Self.setConnectivity(bus, 4)
        try Self.setProfile(bus, "power-saver")
        try Self.setProfile(bus, "performance")
        #expect(eventually(timeout: 10) { rig.value(.networkPath) == "satisfied" && rig.value(.lowPowerMode) == false })
        #expect(rig.notes.value.isEmpty, "held while suspended: \(rig.notes.value)")
        try rig.onLoop { try $0.application.perform(.foreground) }
        let merged = rig.notes.value
        #expect(merged == [#"networkPathDidChange {"status":"satisfied"} (merged from 2)"#], "net zero for the power state: \(merged)")
    }

    @Test func anUnprivilegedPeersSpoofsAreIgnored() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try Self.startDaemons(bus)
        let rig = try HostileBusTests.Rig(bus: bus)
        defer { try? rig.stop() }
        // Both daemons read before the launch: a value read after it is a
        // change, notified (under load power-profiles-daemon's came late).
        #expect(eventually(timeout: 10) {
            rig.value(.networkPath) == "requiresConnection" && rig.value(.lowPowerMode) == true && rig.uniqueName != nil
        })
        try rig.onLoop { try $0.application.perform(.launch) }
        let me = try #require(rig.uniqueName)
        for destination in ["-", me] {
            try HostileBusTests.spoof(bus, ["properties", Self.profiles, "net.hadess.PowerProfiles",
                                            #"{"ActiveProfile": "balanced"}"#, destination])
            try HostileBusTests.spoof(bus, ["properties", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager",
                                            #"{"Connectivity": 1}"#, destination])
        }
        try Self.setConnectivity(bus, 4)
        #expect(eventually(timeout: 5) { rig.notes.value.contains(#"networkPathDidChange {"status":"satisfied"}"#) }, "\(rig.notes.value)")
        #expect(rig.value(.lowPowerMode) == true)
        #expect(!rig.notes.value.contains { $0.contains("unsatisfied") || $0.contains("powerState") }, "\(rig.notes.value)")
    }
}

/// The mapping tables of the two sources, pinned.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct PowerAndNetworkMappingTests {
    @Test func profilesAndConnectivity() {
        #expect(PowerProfilesSource.events(from: ["ActiveProfile": .string("power-saver")]) == [.lowPowerMode(true)])
        #expect(PowerProfilesSource.events(from: ["ActiveProfile": .string("balanced")]) == [.lowPowerMode(false)])
        #expect(PowerProfilesSource.events(from: [:]).isEmpty)
        let table: [Int64: NetworkPathStatus?] = [0: nil, 1: .unsatisfied, 2: .requiresConnection, 3: .requiresConnection,
                                                  4: .satisfied, 9: nil]
        for (value, expected) in table {
            #expect(NetworkManagerSource.networkPath(connectivity: value) == expected, "Connectivity \(value)")
        }
    }
}
