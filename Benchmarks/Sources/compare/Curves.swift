import CLoopPeers
import CRawLibevent
import Glibc
import MainLoopJSON

/// How one operation's cost grows with what the loop holds, for the charts
/// of docs/PERFORMANCE.md: timer schedule+cancel against pending timers, fd
/// readiness dispatch (1, 10 and 100 ready) against registered descriptors, MainLoop
/// beside raw libevent, libuv, GLib and sd-event at each size; and a held
/// event against the subjects the engine keeps. Each round measures every
/// point once, the loops of a point one after the other (MainLoop's and raw
/// libevent's fd dispatch interleaved in chunks, as `FdDispatchPair` does),
/// so a slow phase of the machine lands on all of them.
///
/// `compare --curves [--rounds N]` prints one JSON object a line:
/// `{"curve": "timer", "loop": "MainLoop", "size": 10000, "ns": 58.1, "min": …, "max": …}`,
/// the median of the rounds; Benchmarks/scripts/draw-curves.py draws them.
enum Curves {
    static let timerSizes = [100, 1_000, 10_000, 100_000, 1_000_000]
    static let fdSizes = [100, 1_000, 3_000, 9_000, 30_000, 100_000]
    /// The fd curves: 1, 10 and 100 descriptors ready at once (bench.c's A).
    static let fdReadyCounts = LoopSourceContenders.fdReadyCounts
    static let heldSizes = [10, 1_000, 100_000, 1_000_000]

    static func run(rounds: Int) throws {
        let descriptors = raiseDescriptorLimit()
        // Each fd point opens `size` eventfds for each loop, plus their epoll
        // sets: the sizes the descriptor limit allows are measured.
        let fdSizes = Self.fdSizes.filter { 2 * $0 + 256 <= descriptors }
        var samples: [Point: [Double]] = [:]
        for _ in 0..<rounds {
            for size in timerSizes {
                let operations = 200_000
                samples[Point("timer", "MainLoop", size), default: []]
                    .append(try MainLoopContenders.timerScheduleCancel(pending: size, operations: operations))
                samples[Point("timer", "raw libevent", size), default: []]
                    .append(raw_libevent_timer_add_del_ns(size, operations))
                samples[Point("timer", "libuv", size), default: []]
                    .append(peers_uv_timer_schedule_cancel_ns(size, operations))
                samples[Point("timer", "GLib", size), default: []]
                    .append(peers_glib_timer_schedule_cancel_ns(size, operations))
                samples[Point("timer", "sd-event", size), default: []]
                    .append(peers_sd_event_timer_schedule_cancel_ns(size, operations))
            }
            for ready in fdReadyCounts {
                let curve = ready == 1 ? "fd" : "fd-\(ready)-ready", active = Int32(ready)
                for size in fdSizes where size >= ready {
                    let pair = try FdDispatchPair.measurePair(fds: size, active: ready, dispatches: 40_000)
                    samples[Point(curve, "MainLoop", size), default: []].append(pair[.mainLoop]!)
                    samples[Point(curve, "raw libevent", size), default: []].append(pair[.libevent]!)
                    // GLib polls every descriptor on every iteration: its rounds
                    // are fitted to the time, as the others' would be.
                    samples[Point(curve, "libuv", size), default: []]
                        .append(fitted(active: active) { peers_uv_fd_dispatch_ns(Int32(size), active, $0) })
                    samples[Point(curve, "GLib", size), default: []]
                        .append(fitted(active: active) { peers_glib_fd_dispatch_ns(Int32(size), active, $0) })
                    samples[Point(curve, "sd-event", size), default: []]
                        .append(fitted(active: active) { peers_sd_event_fd_dispatch_ns(Int32(size), active, $0) })
                }
            }
            for size in heldSizes {
                samples[Point("held", "MainLoop", size), default: []]
                    .append(try MainLoopContenders.heldKeyed(events: 1 << 20, subjects: size))
            }
        }
        for (point, values) in samples.sorted(by: { $0.key < $1.key }) {
            let sorted = values.sorted()
            let line: JSONValue = ["curve": .string(point.curve), "loop": .string(point.loop),
                                   "size": .number(Double(point.size)), "ns": .number(rounded(sorted[sorted.count / 2])),
                                   "min": .number(rounded(sorted.first!)), "max": .number(rounded(sorted.last!))]
            print(line.jsonText)
        }
    }

    /// ns per dispatch from `measure(rounds)`, its dispatches fitted to
    /// about 0.1 s (at most 40,000, as the fd pair's, and at least 16) from
    /// a first run of 16 rounds; each round dispatches `active`.
    private static func fitted(active: Int32, _ measure: (Int) -> Double) -> Double {
        let estimate = measure(16)
        guard estimate > 0 else { return estimate }
        let dispatches = max(16, min(40_000, Int(1e8 / estimate)))
        return measure(max(1, dispatches / Int(active)))
    }

    /// One point of a curve.
    struct Point: Hashable, Comparable {
        let curve: String
        let loop: String
        let size: Int
        init(_ curve: String, _ loop: String, _ size: Int) {
            self.curve = curve
            self.loop = loop
            self.size = size
        }
        static func < (lhs: Point, rhs: Point) -> Bool {
            (lhs.curve, lhs.loop, lhs.size) < (rhs.curve, rhs.loop, rhs.size)
        }
    }

    private static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// Raises the soft descriptor limit as far as the hard one allows (and
    /// the hard one too where the process may), for the largest fd points;
    /// returns the limit in force.
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        var wanted = limit
        wanted.rlim_cur = max(limit.rlim_cur, 2 * 100_000 + 1024)
        wanted.rlim_max = max(limit.rlim_max, wanted.rlim_cur)
        if setrlimit(RLIMIT_NOFILE_VALUE, &wanted) != 0 {
            wanted.rlim_cur = limit.rlim_max
            wanted.rlim_max = limit.rlim_max
            _ = setrlimit(RLIMIT_NOFILE_VALUE, &wanted)
        }
        getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        return Int(limit.rlim_cur)
    }

    /// RLIMIT_NOFILE as the type getrlimit takes on Linux.
    private static let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
