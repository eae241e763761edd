import CRawLibevent
import Glibc
import MainLoop

/// MainLoop's side of the fd readiness row: `fds` eventfds watched by one
/// loop; each run writes the next ones in turn and runs one loop pass per
/// write, as `raw_fd_bench_run_ns` does for raw libevent.
final class MainLoopFdBench {
    private let loop: MainRunLoop
    private let dispatched = Counter()
    private var descriptors: [Int32] = []
    private var sources: [FileDescriptorSource] = []
    private var next = 0

    /// `observed`: an observer of every pass activity is installed (what
    /// observers cost per pass when someone uses them).
    init(fds: Int, observed: Bool = false) throws {
        loop = try MainRunLoop()
        if observed {
            let calls = Counter()
            try loop.addObserver(activities: .all) { _ in calls.value &+= 1 }
        }
        for _ in 0..<fds {
            let fd = benchmark_eventfd()
            descriptors.append(fd)
            let dispatched = self.dispatched
            sources.append(try loop.addFileDescriptor(fd, interest: .read) { _ in
                var value: UInt64 = 0
                if read(fd, &value, 8) == 8 { dispatched.value += 1 }
            })
        }
    }

    /// `rounds` rounds, each writing `active` eventfds spread evenly over
    /// the others and running passes until all were dispatched (as
    /// `raw_fd_bench_run_ns` does); the total nanoseconds they took.
    func run(rounds: Int, active: Int = 1) throws -> Double {
        let before = dispatched.value
        var expected = before
        var one: UInt64 = 1
        let count = descriptors.count, spacing = count / active
        let start = nowNanoseconds()
        for _ in 0..<rounds {
            for k in 0..<active where write(descriptors[(next + k * spacing) % count], &one, 8) == 8 { expected += 1 }
            next = next + 1 == count ? 0 : next + 1
            while dispatched.value < expected { try loop.runOnce() }
        }
        let elapsed = nowNanoseconds() - start
        precondition(dispatched.value - before == rounds * active, "fd dispatch lost readiness")
        return elapsed
    }

    /// Removes the sources and closes the eventfds.
    func close() throws {
        for source in sources { try source.remove() }
        for fd in descriptors { Glibc.close(fd) }
        sources = []
        descriptors = []
    }
}

/// The fd readiness rows, MainLoop's and raw libevent's, measured together:
/// both watch their own `fds` eventfds at once and dispatch in alternating
/// chunks of `chunk` (which goes first alternates too), so both see the same
/// phases of the VM. Measured one after the other (about 0.1 s each, MainLoop
/// always first), a round's pair sees different phases, and its ratio
/// varies by a factor of two and more from round to round; interleaved, by
/// a quarter.
enum FdDispatchPair {
    /// Which row.
    enum Side { case mainLoop, libevent }

    /// The last measurement's ns per dispatch for each side and count of
    /// ready descriptors, each taken once by its row.
    nonisolated(unsafe) private static var shares = SharedMeasurement<Share>()

    struct Share: Hashable {
        let side: Side
        let active: Int
    }

    /// Dispatches per chunk: about 20 ms of work, ten times each side's
    /// 1,000 descriptors, so a chunk runs mostly on warm caches. With 500 per
    /// chunk no source was dispatched twice in a chunk and each side found
    /// its data evicted by the other's: a dispatch took 2.9 µs, not 1.9, and
    /// the side with more data per descriptor (MainLoop) paid more of it.
    static let chunk = 10_000

    /// The ns per dispatch of `side` for this round: its share of the last
    /// interleaved measurement if its row did not take it yet, else a new one.
    static func result(_ side: Side, fds: Int, active: Int = 1, rounds: Int) throws -> Double {
        try shares.take(Share(side: side, active: active)) {
            let pair = try measureBoth(fds: fds, active: active, dispatches: rounds)
            return [Share(side: .mainLoop, active: active): pair[.mainLoop]!,
                    Share(side: .libevent, active: active): pair[.libevent]!]
        }
    }

    /// Both sides' ns per dispatch, measured together now (the curves).
    static func measurePair(fds: Int, active: Int = 1, dispatches: Int) throws -> [Side: Double] {
        try measureBoth(fds: fds, active: active, dispatches: dispatches)
    }

    /// About `dispatches` dispatches on each side, `active` ready at a time.
    private static func measureBoth(fds: Int, active: Int, dispatches: Int) throws -> [Side: Double] {
        let mainLoop = try MainLoopFdBench(fds: fds)
        guard let raw = raw_fd_bench_create(Int32(fds)) else { fatalError("raw_fd_bench_create failed") }
        let chunks = max(1, dispatches / chunk), rounds = max(1, chunk / active)
        var totals = (mainLoop: 0.0, libevent: 0.0)
        for index in 0..<chunks {
            for step in 0..<2 {
                if (index + step) & 1 == 0 {
                    totals.mainLoop += try mainLoop.run(rounds: rounds, active: active)
                } else {
                    let elapsed = raw_fd_bench_run_ns(raw, rounds, Int32(active))
                    precondition(elapsed >= 0, "raw libevent fd dispatch lost readiness")
                    totals.libevent += elapsed
                }
            }
        }
        raw_fd_bench_destroy(raw)
        try mainLoop.close()
        let dispatched = Double(chunks * rounds * active)
        return [.mainLoop: totals.mainLoop / dispatched, .libevent: totals.libevent / dispatched]
    }
}
