import CLoopPeers
import CRawLibevent
import Dispatch
import Foundation
import Glibc
import MainLoop
import Synchronization

/// How long a post from another thread takes to run on a
/// loop that sleeps in epoll_wait, against the floor of the same wake in C
/// (an eventfd written to a libevent loop thread) and the cross-thread
/// posts of libuv, GLib and sd-event (loop_peers.h). Each sample waits
/// `gapMicroseconds` first, so the loop is asleep when the post comes, then
/// stamps the monotonic clock and posts; the loop's callback takes its own
/// stamp. A contender's value is the median (p50) of its samples in ns; the
/// p99 of the same samples is kept for its own row (`p99(of:)`).
///
/// The posters of a placement are measured together, their samples
/// interleaved one by one (C, execute, typed, libuv, ..., then execute,
/// typed, libuv, ..., C, ...),
/// each with its own loop thread asleep meanwhile: the VM's noise changes
/// from second to second, and measured one after the other, a round's C
/// floor and MainLoop rows saw different seconds (paired ratios of 0.6–1.5
/// within one run). Each row of a round takes its poster's share of the
/// last measurement (`result(_:_:)`).
///
/// Both sides pin the poster to CPU 0 and the loop thread to a given CPU:
/// another (the loop thread wakes from idle) or the poster's own (the
/// poster yields while it waits, as a thread that blocks would). Left to
/// the scheduler, the placement changed from run to run and was what got
/// measured.
enum WakeLatency {
    /// Where the loop thread runs.
    enum Placement: String, CaseIterable {
        case otherCPU = "loop on another CPU"
        case sameCPU = "loop on the poster's CPU"

        var loopCPU: Int32 { self == .otherCPU ? 1 : 0 }
    }

    /// What posts.
    enum Poster: String, CaseIterable {
        case libevent = "C, eventfd write → libevent callback"
        case execute = "MainLoop loop.execute from another thread"
        case typed = "MainLoop typed channel post from another thread"
        case libuv = "libuv uv_async_send from another thread"
        case glib = "GLib g_main_context_invoke from another thread"
        case sdEvent = "sd-event eventfd write → io source"

        /// The C peer's kind (loop_peers.h), for the peers' posters.
        var peerKind: Int32? {
            switch self {
            case .libuv: Int32(PEER_WAKE_LIBUV)
            case .glib: Int32(PEER_WAKE_GLIB)
            case .sdEvent: Int32(PEER_WAKE_SD_EVENT)
            case .libevent, .execute, .typed: nil
            }
        }
    }

    /// The row of `poster` at `placement`, for `percentile` ("p50" or "p99").
    static func name(_ poster: Poster, _ placement: Placement, _ percentile: String = "p50") -> String {
        "wake of a sleeping loop \(percentile), \(placement.rawValue): \(poster.rawValue)"
    }

    static let samples = 2_000
    static let gapMicroseconds: Int32 = 60

    /// The last measurement's p50 per row, each taken once by its row.
    nonisolated(unsafe) private static var p50Shares = SharedMeasurement<String>()
    /// The last measurement's p99 per row, for the p99 rows that follow it.
    nonisolated(unsafe) private static var lastP99: [String: Double] = [:]

    /// The p99 of the samples that `name`'s row took last.
    static func p99(of name: String) -> Double { lastP99[name] ?? .nan }

    /// The p50 of `poster` at `placement` for this round: its share of the
    /// last interleaved measurement if no row took it yet, else a new one.
    static func result(_ poster: Poster, _ placement: Placement) throws -> Double {
        try p50Shares.take(name(poster, placement)) { try measureAll(placement) }
    }

    /// Measures every poster at `placement`, interleaved sample by
    /// sample: the p50 of each row (its p99 is kept in `lastP99`).
    private static func measureAll(_ placement: Placement) throws -> [String: Double] {
        guard let floor = raw_wake_floor_start(placement.loopCPU) else { throw WakeError.floorDidNotStart }
        defer { raw_wake_floor_stop(floor) }
        var peers: [(poster: Poster, wake: OpaquePointer)] = []
        defer { for peer in peers { peer_wake_stop(peer.wake) } }
        for poster in Poster.allCases {
            guard let kind = poster.peerKind else { continue }
            guard let wake = peer_wake_start(kind, placement.loopCPU) else { throw WakeError.peerDidNotStart(poster) }
            peers.append((poster, wake))
        }
        let executeThread = try loopThread(pinnedTo: placement.loopCPU)
        let typedThread = try loopThread(pinnedTo: placement.loopCPU)
        let executeProbe = Probe(), typedProbe = Probe()
        let channel = try onLoop(typedThread) { () throws(MainLoopError) in
            try typedThread.loop.makeChannel(of: Int.self) { _ in typedProbe.arrived() }
        }
        var latencies: [Poster: [Double]] = Dictionary(uniqueKeysWithValues: Poster.allCases.map { ($0, []) })
        let posters = Poster.allCases.count
        benchmark_pin_current_thread(0)
        for index in 0..<samples {
            for step in 0..<posters {
                // Each sample index starts the round at the next poster.
                let poster = Poster.allCases[(index + step) % posters]
                switch poster {
                case .libevent:
                    let latency = raw_wake_floor_sample(floor, gapMicroseconds)
                    precondition(latency >= 0, "a wake was lost")
                    latencies[.libevent]!.append(latency)
                case .execute:
                    try executeProbe.sample { try executeThread.loop.execute { executeProbe.arrived() } }
                case .typed:
                    try typedProbe.sample { try channel.post(0) }
                case .libuv, .glib, .sdEvent:
                    let wake = peers.first { $0.poster == poster }!.wake
                    let latency = peer_wake_sample(wake, gapMicroseconds)
                    precondition(latency >= 0, "a \(poster) wake was lost")
                    latencies[poster]!.append(latency)
                }
            }
        }
        benchmark_pin_current_thread(-1)
        try executeThread.stopAndJoin()
        try typedThread.stopAndJoin()
        latencies[.execute] = executeProbe.latencies
        latencies[.typed] = typedProbe.latencies
        var p50: [String: Double] = [:]
        for (poster, values) in latencies {
            let sorted = values.sorted()
            p50[name(poster, placement)] = sorted[sorted.count / 2]
            lastP99[name(poster, placement)] = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
        return p50
    }

    enum WakeError: Error {
        case floorDidNotStart
        case peerDidNotStart(Poster)
    }

    /// Shared between the posting thread and the loop thread: the stamp of
    /// the post in flight, whether it ran, and the latencies recorded.
    private final class Probe: @unchecked Sendable {
        let sentAt = Atomic<UInt64>(0)
        let delivered = Atomic<Bool>(false)
        /// Unchecked, like `Counter` and the C floor's plain array: the
        /// probe's own bookkeeping should not pay Swift's dynamic
        /// exclusivity check (and its thread-local access set) per sample.
        @exclusivity(unchecked) var latencies: [Double] = []

        init() { latencies.reserveCapacity(WakeLatency.samples) }

        /// On the loop thread: records the latency of the post in flight
        /// (stamped first, as the C floor's callback does).
        func arrived() {
            let now = nowNanoseconds()
            latencies.append(now - Double(sentAt.load(ordering: .acquiring)))
            delivered.store(true, ordering: .releasing)
        }

        /// On the (pinned) posting thread: waits the gap, stamps, posts, and
        /// yields until the post ran.
        func sample(_ post: () throws -> Void) rethrows {
            usleep(UInt32(WakeLatency.gapMicroseconds))
            delivered.store(false, ordering: .relaxed)
            sentAt.store(UInt64(nowNanoseconds()), ordering: .releasing)  // exact: under 2^53 ns
            try post()
            while !delivered.load(ordering: .acquiring) { sched_yield() }
        }
    }

    /// A loop running on a thread of its own, pinned to `cpu`.
    private static func loopThread(pinnedTo cpu: Int32) throws -> LoopThread {
        let thread = try LoopThread.start()
        _ = try onLoop(thread) { () throws(MainLoopError) in benchmark_pin_current_thread(cpu) }
        return thread
    }

    /// Runs `body` on `thread`'s loop and waits for its result.
    private static func onLoop<Result>(_ thread: LoopThread, _ body: @escaping @Sendable () throws(MainLoopError) -> Result)
        throws -> Result {
        nonisolated(unsafe) var outcome: Swift.Result<Result, MainLoopError>?
        let done = DispatchSemaphore(value: 0)
        try thread.loop.execute {
            outcome = Swift.Result { () throws(MainLoopError) in try body() }
            done.signal()
        }
        done.wait()
        return try outcome!.get()
    }
}
