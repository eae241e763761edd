@testable import MainLoop
import Glibc
import Synchronization
import Testing
import TestSupport

/// A channel's eventfd is edge-triggered and never read: a wake from another
/// thread costs the poster's write and the loop's `epoll_wait`, not a third
/// system call. On a level-triggered backend (libevent picks `poll` when
/// `EVENT_NOEPOLL` is set) the unread eventfd would be ready on every pass
/// and the loop would never sleep again.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct LibeventBackendTests {
    /// libevent reads `EVENT_NOEPOLL` and the like from the environment
    /// unless told not to; the loop's base is told not to. In a child
    /// process of its own (an exit test): `setenv` here raced with other
    /// suites' `Process.run`, which copies the environment, and crashed the
    /// whole run.
    @Test func theEnvironmentDoesNotChooseTheBackend() async {
        await #expect(processExitsWith: .success) {
            setenv("EVENT_NOEPOLL", "1", 1)
            guard let loop = try? MainRunLoop(), loop.backendMethod == "epoll" else { exit(1) }
        }
    }

    /// After a post from another thread is handled, the loop sleeps again:
    /// the next `runOnce` returns only when a timer 20 ms away has fired,
    /// not at once on the eventfd the post wrote. Three rounds, so a wake
    /// after one already handled is checked too.
    @Test func aLoopWokenFromAnotherThreadSleepsAgain() throws {
        let loop = try MainRunLoop()
        let handled = Atomic<Int>(0)
        for round in 1...3 {
            let poster = TestThread { try! loop.execute { handled.add(1, ordering: .relaxed) } }
            poster.join()
            while handled.load(ordering: .relaxed) < round { try loop.runOnce() }
            var fired = false
            loop.scheduleTimer(after: .milliseconds(20)) { fired = true }
            try loop.runOnce()
            #expect(fired, "round \(round): runOnce returned before the timer, on a wake already handled")
        }
        try loop.shutdown()
    }
}
