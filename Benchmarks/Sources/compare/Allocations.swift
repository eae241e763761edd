import CLoopPeers
import CRawLibevent
import Glibc
import MainLoopJSON

/// `compare --allocations`: the heap allocations per operation of each
/// loop's rows, counted by the malloc interposer (allocation_counter.c) on
/// every thread. A row's function runs N and then 2N operations, each with
/// its own setup; the difference over N is what one operation allocates,
/// the setup cancelling out. Prints one JSON object a line:
/// `{"allocations": "MainLoop timer schedule+cancel, 10000 pending", "perOperation": 0}`.
enum Allocations {
    /// One row: its name (as in `compare`'s table) and N operations of it.
    struct Row {
        let name: String
        let run: (Int) throws -> Void
    }

    static let operations = 20_000

    static var rows: [Row] {
        let timer = LoopSourceContenders.timerOperation, idle = LoopSourceContenders.idleOperation
        let fd1 = LoopSourceContenders.fdOperation(ready: 1), fd100 = LoopSourceContenders.fdOperation(ready: 100)
        return [
            Row(name: "MainLoop \(timer)") { _ = try MainLoopContenders.timerScheduleCancel(pending: 10_000, operations: $0) },
            Row(name: "MainLoop \(timer), per-callback clock") {
                _ = try MainLoopContenders.timerScheduleCancel(pending: 10_000, operations: $0, clockReading: .perCallback)
            },
            Row(name: "raw libevent \(timer)") { _ = raw_libevent_timer_add_del_ns(10_000, $0) },
            Row(name: "libuv \(timer)") { _ = peers_uv_timer_schedule_cancel_ns(10_000, $0) },
            Row(name: "GLib \(timer)") { _ = peers_glib_timer_schedule_cancel_ns(10_000, $0) },
            Row(name: "sd-event \(timer)") { _ = peers_sd_event_timer_schedule_cancel_ns(10_000, $0) },
            Row(name: "MainLoop \(fd1)") { _ = try MainLoopContenders.fdDispatch(fds: 1000, rounds: $0) },
            Row(name: "raw libevent \(fd1)") { _ = raw_libevent_fd_dispatch_ns(1000, $0) },
            Row(name: "libuv \(fd1)") { _ = peers_uv_fd_dispatch_ns(1000, 1, $0) },
            Row(name: "GLib \(fd1)") { _ = peers_glib_fd_dispatch_ns(1000, 1, $0) },
            Row(name: "sd-event \(fd1)") { _ = peers_sd_event_fd_dispatch_ns(1000, 1, $0) },
            Row(name: "MainLoop \(fd100)") { _ = try MainLoopContenders.fdDispatch(fds: 1000, active: 100, rounds: $0 / 100) },
            Row(name: "libuv \(fd100)") { _ = peers_uv_fd_dispatch_ns(1000, 100, $0 / 100) },
            Row(name: "GLib \(fd100)") { _ = peers_glib_fd_dispatch_ns(1000, 100, $0 / 100) },
            Row(name: "sd-event \(fd100)") { _ = peers_sd_event_fd_dispatch_ns(1000, 100, $0 / 100) },
            Row(name: "MainLoop in-loop post→run, typed channel") { _ = try MainLoopContenders.inLoopTyped(events: $0) },
            Row(name: "MainLoop in-loop post→run, closure per post") { _ = try MainLoopContenders.inLoopClosure(events: $0) },
            Row(name: "raw libevent event_active→callback (no evthread)") { _ = raw_libevent_inloop_ns_per_event($0) },
            Row(name: "GLib in-loop post→run") { _ = peers_glib_inloop_post_ns($0) },
            Row(name: "sd-event in-loop post→run") { _ = peers_sd_event_inloop_post_ns($0) },
            Row(name: "MainLoop \(idle)") { _ = try LoopSourceContenders.mainLoopIdlePass($0) },
            Row(name: "libuv \(idle)") { _ = peers_uv_idle_pass_ns($0) },
            Row(name: "GLib \(idle)") { _ = peers_glib_idle_pass_ns($0) },
            Row(name: "sd-event \(idle)") { _ = peers_sd_event_defer_pass_ns($0) },
        ]
    }

    /// Counts every row and prints its line. The fd rows with 100 ready
    /// run N/100 rounds: their operation is one dispatched descriptor.
    static func run() throws -> Never {
        for row in rows {
            let once = try allocations(row, operations), twice = try allocations(row, 2 * operations)
            let perOperation = Double(twice - once) / Double(operations)
            let line: JSONValue = ["allocations": .string(row.name), "perOperation": .number((perOperation * 100).rounded() / 100)]
            print(line.jsonText)
        }
        exit(0)
    }

    /// The allocations of `row` run with `count` operations.
    private static func allocations(_ row: Row, _ count: Int) throws -> Int {
        allocation_counting(1)
        defer { allocation_counting(0) }
        let before = allocation_count()
        try row.run(count)
        return allocation_count() - before
    }
}
