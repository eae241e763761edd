import CLoopPeers
import CRawLibevent
import Glibc
import MainLoop

/// libuv's `million_timers` for every loop: a million one-shot timers, each
/// 10,000 due 1 ms after the 10,000 before (libuv's shape, 1,000 a
/// millisecond, at a tenth of its 1 s so that five loops fit a round),
/// scheduled, run until all fired, and freed. A row per phase, in thread CPU
/// time per timer: the dispatch phase counts the loop's work, not its waits
/// for the clock.
enum MillionTimers {
    static let count = 1_000_000
    static let perMillisecond = 10_000

    /// The three phases, as the rows name them.
    enum Phase: Int, CaseIterable {
        case schedule, dispatch, free
        var operation: String {
            switch self {
            case .schedule: "a million timers: schedule, CPU per timer"
            case .dispatch: "a million timers: dispatch, CPU per timer"
            case .free: "a million timers: free, CPU per timer"
            }
        }
    }

    /// One run of a loop gives its three rows; each row takes its phase once.
    nonisolated(unsafe) private static var shares: [String: SharedMeasurement<Phase>] = [:]

    /// Each loop's run, by the name its rows start with.
    static var loops: [(name: String, measure: () throws -> [Double])] { [
        ("MainLoop", mainLoop),
        ("raw libevent", { try measured("raw libevent", raw_libevent_million_timers) }),
        ("libuv", { try measured("libuv", peers_uv_million_timers) }),
        ("GLib", { try measured("GLib", peers_glib_million_timers) }),
        ("sd-event", { try measured("sd-event", peers_sd_event_million_timers) }),
    ] }

    /// Every run is made in a process of its own (`compare --million-timers
    /// LOOP`): a million timers grow the heap by hundreds of MB, and in this
    /// process that made libuv's child row (whose `uv_spawn` forks) several
    /// times slower.
    static func rows() -> [Contender] {
        loops.flatMap { loop in
            Phase.allCases.map { phase in
                Contender(name: "\(loop.name) \(phase.operation)") {
                    try shares[loop.name, default: SharedMeasurement()].take(phase) {
                        let phases = try inChildProcess(loop.name)
                        return Dictionary(uniqueKeysWithValues: Phase.allCases.map { ($0, phases[$0.rawValue]) })
                    }
                }
            }
        }
    }

    /// `compare --million-timers LOOP`: runs LOOP's measurement here and
    /// prints its three phases on one line.
    static func runAsChild(_ name: String) throws -> Never {
        guard let loop = loops.first(where: { $0.name == name }) else { throw BenchmarkFailure("no loop named \(name)") }
        print(try loop.measure().map { String($0) }.joined(separator: " "))
        exit(0)
    }

    /// Runs `compare --million-timers LOOP` and reads its three phases.
    private static func inChildProcess(_ loop: String) throws -> [Double] {
        let phases = try FreshProcess.numbers(["--million-timers", loop])
        guard phases.count == 3 else { throw BenchmarkFailure("\(loop)'s million timers printed \(phases.count) numbers, not 3") }
        return phases
    }

    /// A C loop's run: its three phases, or an error when a timer did not fire.
    private static func measured(_ loop: String, _ run: (Int, Int, UnsafeMutablePointer<Double>) -> Int32) throws -> [Double] {
        var phases = [Double](repeating: 0, count: 3)
        guard run(count, perMillisecond, &phases) == 0 else { throw BenchmarkFailure("\(loop): a timer did not fire") }
        return phases
    }

    /// MainLoop's run: a timer made and scheduled at an instant for each,
    /// `run()` until the last fired, then the handles released. The
    /// instants count from one clock reading, as libuv's timers count from
    /// its cached loop time (`scheduleTimer(after:)` reads the clock for
    /// each: the timer schedule+cancel row). Every timer gets the same
    /// handler, as the C loops' timers share one callback function: a
    /// closure literal in the loop would allocate its context per timer.
    private static func mainLoop() throws -> [Double] {
        let loop = try MainRunLoop()
        let fired = Counter()
        let total = count
        let handler = {
            fired.value += 1
            if fired.value == total { loop.stop() }
        }
        let start = threadCPUNanoseconds()
        var timers: [LoopTimer] = []
        timers.reserveCapacity(count)
        let origin = loop.now
        for index in 0..<count {
            let timer = loop.makeTimer(handler)
            timer.schedule(at: origin + .milliseconds(1 + index / perMillisecond))
            timers.append(timer)
        }
        let scheduled = threadCPUNanoseconds()
        try loop.run()
        let dispatched = threadCPUNanoseconds()
        timers = []
        try loop.shutdown()
        let freed = threadCPUNanoseconds()
        guard fired.value == count else { throw BenchmarkFailure("MainLoop: a timer did not fire") }
        return [scheduled - start, dispatched - scheduled, freed - dispatched].map { $0 / Double(count) }
    }

    private static func threadCPUNanoseconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
    }
}
