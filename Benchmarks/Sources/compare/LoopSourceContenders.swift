import CLoopPeers
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
    static let fdOperation = "fd readiness dispatch, 1 ready of 1000"

    /// The C loops' timer and fd rows, beside MainLoop's and raw libevent's
    /// of the same operation (each loop's cheapest idiom: loop_peers.h).
    static func timerAndFdRows(operations: Int, rounds: Int) -> [Contender] {
        [
            Contender(name: "libuv \(timerOperation)") { peers_uv_timer_schedule_cancel_ns(10_000, operations) },
            Contender(name: "GLib \(timerOperation)") { peers_glib_timer_schedule_cancel_ns(10_000, operations) },
            Contender(name: "sd-event \(timerOperation)") { peers_sd_event_timer_schedule_cancel_ns(10_000, operations) },
            Contender(name: "libuv \(fdOperation)") { peers_uv_fd_dispatch_ns(1000, rounds) },
            Contender(name: "GLib \(fdOperation)") { peers_glib_fd_dispatch_ns(1000, rounds) },
            Contender(name: "sd-event \(fdOperation)") { peers_sd_event_fd_dispatch_ns(1000, rounds) },
        ]
    }

    static func childRows(children: Int) -> [Contender] {
        [
            Contender(name: "MainLoop \(childOperation)") { try mainLoopChildCycle(Int32(children)) },
            Contender(name: "libuv \(childOperation)") { peers_uv_child_cycle_ns(Int32(children)) },
            Contender(name: "GLib \(childOperation)") { peers_glib_child_cycle_ns(Int32(children)) },
            Contender(name: "sd-event \(childOperation)") { peers_sd_event_child_cycle_ns(Int32(children)) },
        ]
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
