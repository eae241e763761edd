import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// The thermal state from thermal zones laid out as the kernel's
/// `/sys/class/thermal` (a directory of the test's own: this VM has no
/// zones), polled on the manual clock.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct ThermalZoneTests {
    /// A zone with trip points at 50 °C (active), 80 °C (passive), 100 °C (critical).
    static func makeZone(_ directory: TemporaryDirectory, _ name: String, celsius: Int) {
        let zone = directory.file(name)
        mkdir(zone, 0o755)
        writeFile(zone + "/temp", "\(celsius * 1000)\n")
        for (index, (temp, type)) in [(50, "active"), (80, "passive"), (100, "critical")].enumerated() {
            writeFile(zone + "/trip_point_\(index)_temp", "\(temp * 1000)\n")
            writeFile(zone + "/trip_point_\(index)_type", "\(type)\n")
        }
    }

    static func setTemperature(_ directory: TemporaryDirectory, _ name: String, celsius: Int) {
        writeFile(directory.file(name) + "/temp", "\(celsius * 1000)\n")
    }

    @Test func theHottestZoneAgainstItsTripPointsIsTheStateAndChangesArePosted() throws {
        let directory = TemporaryDirectory()
        Self.makeZone(directory, "thermal_zone0", celsius: 40)
        Self.makeZone(directory, "thermal_zone1", celsius: 45)
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let center = application.notifications
        var notes: [String] = []
        try center.addObserver { notes.append("\($0)") }
        var problems: [String] = []
        let source = ThermalZoneSource(loop: loop, directory: directory.path, post: { try? center.post($0) }) { problems.append($0) }
        #expect(source.state == .nominal)
        try center.setInitialValue(source.currentEvent)
        try application.perform(.launch)

        Self.setTemperature(directory, "thermal_zone1", celsius: 55)
        try loop.advance(by: .seconds(4))
        #expect(notes.isEmpty, "not before the next poll")
        try loop.advance(by: .seconds(1))
        #expect(notes == [#"thermalStateDidChange {"thermalState":"fair"}"#])

        // Suspended: serious, then critical, then back to fair: net zero.
        try application.perform(.home)
        Self.setTemperature(directory, "thermal_zone0", celsius: 85)
        try loop.advance(by: .seconds(5))
        Self.setTemperature(directory, "thermal_zone0", celsius: 101)
        try loop.advance(by: .seconds(5))
        Self.setTemperature(directory, "thermal_zone0", celsius: 90)
        try loop.advance(by: .seconds(5))
        #expect(source.state == .serious)
        notes.removeAll()
        try application.perform(.foreground)
        #expect(notes == [#"thermalStateDidChange {"thermalState":"serious"} (merged from 3)"#], "\(notes)")
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aZoneThatCannotBeReadIsNamedAndLeftOut() throws {
        let directory = TemporaryDirectory()
        Self.makeZone(directory, "thermal_zone0", celsius: 85)
        Self.makeZone(directory, "thermal_zone1", celsius: 120)
        writeFile(directory.file("thermal_zone1") + "/temp", "hot\n")
        Self.makeZone(directory, "thermal_zone2", celsius: 120)
        unlink(directory.file("thermal_zone2") + "/temp")
        #expect(mkfifo(directory.file("thermal_zone2") + "/temp", 0o644) == 0)
        var problems: [String] = []
        let state = ThermalZoneSource.readState(of: directory.path) { problems.append($0) }
        #expect(state == .serious, "only the readable zone counts")
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.contains { $0.contains("'hot' is not a temperature") }, "\(problems)")
        #expect(ThermalZoneSource.readState(of: "/nonexistent") { _ in } == .nominal)
    }
}
