import FileSupport
import Glibc
import MainLoop
import SystemNotifications

/// The thermal state from the kernel's thermal zones
/// (`/sys/class/thermal/thermal_zone*`): each zone's `temp` against its trip
/// points (`trip_point_N_temp` and `trip_point_N_type`), polled on a loop
/// timer, the device's state being its hottest zone's.
///
/// | a zone at or past a trip point of type | thermalState |
/// |---|---|
/// | `critical` or `hot` | critical |
/// | `passive` (the kernel throttles) | serious |
/// | `active` (the kernel turns a fan on) | fair |
/// | none | nominal |
///
/// The kernel tells a zone's readers nothing when its temperature moves (no
/// uevent, no poll readiness on `temp`), so the source polls, every
/// ``interval`` (5 s by default, at least 1 s); it posts only when the state
/// changes. A zone whose files cannot be read (absent, not a regular file,
/// malformed) is reported through `onProblem` and left out; a machine
/// without thermal zones (a VM) is `nominal`. Loop thread only.
public final class ThermalZoneSource {
    /// Where the zones are listed.
    public let directory: String
    /// How often the zones are read.
    public let interval: Duration
    /// The state last read.
    public private(set) var state: ThermalState = .nominal
    private let post: (SystemEvent) -> Void
    private let onProblem: (String) -> Void
    private var timer: LoopTimer?
    /// Zones and trip points read at most (a directory of the test's own may be anything).
    static let maxZones = 64, maxTripPoints = 32

    /// Reads the zones once (``state``) and polls them every `interval`.
    /// - Parameters:
    ///   - loop: the loop whose timer polls.
    ///   - directory: where the zones are (`/sys/class/thermal`).
    ///   - interval: how often the zones are read; below 1 s is taken as 1 s.
    ///   - post: each change of the state.
    ///   - onProblem: a zone that cannot be read; rate-limit it.
    public init(loop: MainRunLoop, directory: String = "/sys/class/thermal", interval: Duration = .seconds(5),
                post: @escaping (SystemEvent) -> Void, onProblem: @escaping (String) -> Void) {
        self.directory = directory
        self.interval = max(interval, .seconds(1))
        self.post = post
        self.onProblem = onProblem
        state = Self.readState(of: directory, onProblem: onProblem)
        timer = loop.makeTimer { [weak self] in self?.poll() }
        timer?.schedule(after: self.interval, repeating: self.interval)
    }

    /// The state as an event, for the center's baseline before launch.
    public var currentEvent: SystemEvent { .thermalState(state) }

    /// Reads the zones now and posts the state if it changed.
    public func poll() {
        let now = Self.readState(of: directory, onProblem: onProblem)
        guard now != state else { return }
        state = now
        post(.thermalState(now))
    }

    /// The state of the zones in `directory` now: the hottest zone's; a zone
    /// that cannot be read is named through `onProblem` and left out.
    public static func readState(of directory: String, onProblem: (String) -> Void) -> ThermalState {
        state(of: zones(in: directory), onProblem: onProblem)
    }

    /// The zone directories (`thermal_zone0`, …) in `directory`.
    static func zones(in directory: String) -> [String] {
        let names = DirectoryNames.list(directory, limit: maxZones) { $0.hasPrefix("thermal_zone") } ?? []
        return names.sorted().map { directory + "/" + $0 }
    }

    /// The hottest state over `zones`.
    static func state(of zones: [String], onProblem: (String) -> Void) -> ThermalState {
        var worst = ThermalState.nominal
        for zone in zones {
            do {
                let zoneState = try state(ofZone: zone)
                if rank(zoneState) > rank(worst) { worst = zoneState }
            } catch {
                onProblem("thermal zone \(zone): \(error); left out")
            }
        }
        return worst
    }

    /// One zone's state: its temperature against its trip points.
    static func state(ofZone zone: String) throws(ThermalZoneError) -> ThermalState {
        let temperature = try number(zone + "/temp")
        var state = ThermalState.nominal
        for index in 0..<maxTripPoints {
            let tripTemperature: Int
            do {
                tripTemperature = try number(zone + "/trip_point_\(index)_temp")
            } catch .missing {
                break
            }
            guard temperature >= tripTemperature else { continue }
            let tripState = try tripType(zone + "/trip_point_\(index)_type")
            if rank(tripState) > rank(state) { state = tripState }
        }
        return state
    }

    /// What crossing a trip point of the type in `path` means.
    private static func tripType(_ path: String) throws(ThermalZoneError) -> ThermalState {
        switch try text(path) {
        case "critical", "hot": return .critical
        case "passive": return .serious
        case "active": return .fair
        case let other: throw .malformed(path: path, problem: "unknown trip point type '\(other)'")
        }
    }

    private static func number(_ path: String) throws(ThermalZoneError) -> Int {
        let value = try text(path)
        guard let number = Int(value) else { throw .malformed(path: path, problem: "'\(value)' is not a temperature") }
        return number
    }

    private static func text(_ path: String) throws(ThermalZoneError) -> String {
        do {
            let bytes = try FileContents.regularFileBytes(path, maxBytes: 64)
            return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        } catch .missing {
            throw .missing(path: path)
        } catch {
            throw .unreadable(path: path, problem: "\(error)")
        }
    }

    private static func rank(_ state: ThermalState) -> Int {
        switch state {
        case .nominal: return 0
        case .fair: return 1
        case .serious: return 2
        case .critical: return 3
        }
    }
}

/// Why a thermal zone could not be read.
public enum ThermalZoneError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not there.
    case missing(path: String)
    /// The file could not be read (not a regular file, too large, an error).
    case unreadable(path: String, problem: String)
    /// The file says something that is not a temperature or a trip type.
    case malformed(path: String, problem: String)

    public var description: String {
        switch self {
        case .missing(let path): return "\(path) is missing"
        case .unreadable(let path, let problem): return "\(path) cannot be read: \(problem)"
        case .malformed(let path, let problem): return "\(path): \(problem)"
        }
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension ThermalZoneSource: Sendable {}
