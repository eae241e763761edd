import CLoopPeers
import CRawLibevent
import Dispatch
import Foundation

/// The loops Swift developers use today, doing the same work (SwiftNIO's are
/// in NIOContenders, beside MainLoopNIO on the same code).
enum PeerContenders {
    static func rawLibevent(events: Int) -> Double {
        raw_libevent_inloop_ns_per_event(events)
    }

    /// A C peer's setup failed (it returned a negative value).
    struct PeerFailure: Error, CustomStringConvertible {
        let what: String
        var description: String { "\(what): the C peer could not set up its loop" }
    }

    /// `value`, or a `PeerFailure` naming `what` when it is negative.
    static func checked(_ value: Double, _ what: String) throws -> Double {
        guard value >= 0 else { throw PeerFailure(what: what) }
        return value
    }

    /// GLib's in-loop post: g_idle_add chained (loop_peers.h).
    static func glibInLoopPost(posts: Int) throws -> Double {
        try checked(peers_glib_inloop_post_ns(posts), "GLib in-loop post")
    }

    /// sd-event's in-loop post: one defer source enabled ONESHOT again.
    static func sdEventInLoopPost(posts: Int) throws -> Double {
        try checked(peers_sd_event_inloop_post_ns(posts), "sd-event in-loop post")
    }

    /// `DispatchQueue.async` onto a serial queue from another thread.
    static func dispatchSerial(events: Int) -> Double {
        let queue = DispatchQueue(label: "compare.serial")
        let counter = Counter()
        return nanosecondsPerEvent(events) {
            for _ in 0..<events { queue.async { counter.value += 1 } }
            queue.sync {}
        }
    }

    /// Synchronous `NotificationCenter.post` to one block observer.
    static func notificationCenterPost(events: Int) -> Double {
        let center = NotificationCenter()
        let name = Notification.Name("compare.orientation")
        let counter = Counter()
        let token = center.addObserver(forName: name, object: nil, queue: nil) { _ in counter.value += 1 }
        defer { center.removeObserver(token) }
        return nanosecondsPerEvent(events) {
            for _ in 0..<events { center.post(name: name, object: nil) }
        }
    }

    /// `NotificationQueue.enqueue` with name coalescing, then one run loop
    /// pass to deliver (the closest Foundation analogue of holding).
    static func notificationQueueCoalescing(events: Int) -> Double {
        let center = NotificationCenter()
        let queue = NotificationQueue(notificationCenter: center)
        let name = Notification.Name("compare.coalesced")
        let counter = Counter()
        let token = center.addObserver(forName: name, object: nil, queue: nil) { _ in counter.value += 1 }
        defer { center.removeObserver(token) }
        let note = Notification(name: name)
        return nanosecondsPerEvent(events) {
            for _ in 0..<events {
                queue.enqueue(note, postingStyle: .whenIdle, coalesceMask: [.onName], forModes: nil)
            }
            _ = RunLoop.current.run(mode: .default, before: Date())
        }
    }

    /// `RunLoop.perform` blocks, then running the run loop until all ran.
    static func runLoopPerform(events: Int) -> Double {
        let counter = Counter()
        let runLoop = RunLoop.current
        return nanosecondsPerEvent(events) {
            for _ in 0..<events { runLoop.perform { counter.value += 1 } }
            while counter.value < events { _ = runLoop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001)) }
        }
    }
}
