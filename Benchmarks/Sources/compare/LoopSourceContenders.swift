import CLoopPeers
import Glibc
import MainLoop

/// Idle passes, timers, fd dispatch and child processes, for MainLoop and
/// the C loops a Linux service would pick instead, doing the same thing.
enum LoopSourceContenders {
    static let idleOperation = "idle pass, one idle handler"
    static let childOperation = "child spawn→exit→handler, /bin/true"

    static func idleRows(passes: Int) -> [Contender] {
        [
            Contender(name: "MainLoop \(idleOperation)") { try mainLoopIdlePass(passes) },
            Contender(name: "libuv \(idleOperation)") { peers_uv_idle_pass_ns(passes) },
            Contender(name: "GLib \(idleOperation)") { peers_glib_idle_pass_ns(passes) },
            Contender(name: "sd-event \(idleOperation)") { peers_sd_event_defer_pass_ns(passes) },
        ]
    }

    static let timerOperation = "timer schedule+cancel, 10000 pending"
    /// The fd rows' operation, `ready` of 1000 descriptors ready at once.
    static func fdOperation(ready: Int) -> String { "fd readiness dispatch, \(ready) ready of 1000" }
    /// How many descriptors are ready at once in the fd rows (bench.c's A).
    static let fdReadyCounts = [1, 10, 100]

    /// The C loops' timer and fd rows, beside MainLoop's and raw libevent's
    /// of the same operation (each loop's cheapest idiom: loop_peers.h).
    static func timerAndFdRows(operations: Int, rounds: Int) -> [Contender] {
        [
            Contender(name: "libuv \(timerOperation)") { peers_uv_timer_schedule_cancel_ns(10_000, operations) },
            Contender(name: "GLib \(timerOperation)") { peers_glib_timer_schedule_cancel_ns(10_000, operations) },
            Contender(name: "sd-event \(timerOperation)") { peers_sd_event_timer_schedule_cancel_ns(10_000, operations) },
        ] + fdReadyCounts.flatMap { ready in
            let fd = fdOperation(ready: ready), readyRounds = max(1, rounds / ready)
            return [
                Contender(name: "libuv \(fd)") { peers_uv_fd_dispatch_ns(1000, Int32(ready), readyRounds) },
                Contender(name: "GLib \(fd)") { peers_glib_fd_dispatch_ns(1000, Int32(ready), readyRounds) },
                Contender(name: "sd-event \(fd)") { peers_sd_event_fd_dispatch_ns(1000, Int32(ready), readyRounds) },
            ]
        }
    }

    /// MainLoop's and raw libevent's fd rows, measured together in
    /// alternating chunks (FdDispatchPair).
    static func fdPairRows(dispatches: Int) -> [Contender] {
        fdReadyCounts.flatMap { ready in
            [
                Contender(name: "MainLoop \(fdOperation(ready: ready))") {
                    try FdDispatchPair.result(.mainLoop, fds: 1000, active: ready, rounds: dispatches)
                },
                Contender(name: "raw libevent \(fdOperation(ready: ready))") {
                    try FdDispatchPair.result(.libevent, fds: 1000, active: ready, rounds: dispatches)
                },
            ]
        }
    }

    /// Each loop's child cycle, by the name its row starts with.
    static var childCycles: [(name: String, measure: (Int32) throws -> Double)] { [
        ("MainLoop", mainLoopChildCycle),
        ("libuv", { peers_uv_child_cycle_ns($0) }),
        ("GLib", { peers_glib_child_cycle_ns($0) }),
        ("sd-event", { peers_sd_event_child_cycle_ns($0) }),
    ] }

    /// Each child row is measured in a process of its own (`compare
    /// --child-cycle LOOP N`): libuv's `uv_spawn` forks, and a fork's cost
    /// grows with the process, which the earlier rows made large.
    static func childRows(children: Int) -> [Contender] {
        childCycles.map { loop in
            Contender(name: "\(loop.name) \(childOperation)") {
                let numbers = try FreshProcess.numbers(["--child-cycle", loop.name, String(children)])
                guard numbers.count == 1, numbers[0] >= 0 else { throw BenchmarkFailure("\(loop.name)'s child cycle failed") }
                return numbers[0]
            }
        }
    }

    /// `compare --child-cycle LOOP N`: measures LOOP's child cycle here and
    /// prints its ns per child.
    static func runChildCycleAsChild(_ name: String, children: String) throws -> Never {
        guard let loop = childCycles.first(where: { $0.name == name }), let count = Int32(children), count > 0 else {
            throw BenchmarkFailure("--child-cycle takes a loop (\(childCycles.map(\.name).joined(separator: ", "))) and a count")
        }
        print(try loop.measure(count))
        exit(0)
    }

    /// A pass that finds nothing ready and runs the idle handler: MainLoop's
    /// idle handler never keeps the loop awake by itself, so each pass is
    /// one `runUntilIdle()` (one non-blocking poll, then the idle round), as
    /// each of the peers' passes is one poll with a zero timeout and the callback.
    static func mainLoopIdlePass(_ passes: Int) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        let idle = try loop.addIdle { counter.value += 1 }
        let nanoseconds = try nanosecondsPerEvent(passes) {
            for _ in 0..<passes { try loop.runUntilIdle() }
        }
        precondition(counter.value == passes, "one idle run per pass")
        try idle.remove()
        try loop.shutdown()
        return nanoseconds
    }

    /// `spawnChildProcess` of /bin/true and its end delivered, one after another.
    static func mainLoopChildCycle(_ children: Int32) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        let nanoseconds = try nanosecondsPerEvent(Int(children)) {
            for index in 0..<Int(children) {
                _ = try loop.spawnChildProcess(executable: "/bin/true") { _ in counter.value += 1 }
                while counter.value <= index { try loop.runOnce() }
            }
        }
        try loop.shutdown()
        return nanoseconds
    }
}
