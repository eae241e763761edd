import Dispatch
import Glibc
import MainLoop
import Testing
import TestSupport

/// A descriptor source whose owner is gone must not keep the loop busy: a
/// readable descriptor nobody reads is ready on every pass, and at its
/// priority it would starve the lower-priority work that carries the
/// owner's cleanup (the livelock a released FileWatcher caused).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct WeaklyOwnedSourceTests {
    final class Owner {
        var reads = 0
    }

    /// In a child process with an alarm: the old behaviour (the descriptor
    /// ready on every pass) never goes idle.
    @Test func aSourceWhoseOwnerIsGoneRemovesItselfInsteadOfSpinning() async {
        await #expect(processExitsWith: .success) {
            alarm(10)
            let loop = try MainRunLoop(deterministic: true)
            let pipe = TestPipe()
            var owner: Owner? = Owner()
            let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read, priority: .system, owner: owner!) { owner, _ in
                owner.reads += 1
                pipe.drain()
            }
            pipe.writeByte()
            try loop.runUntilIdle()
            precondition(owner?.reads == 1)
            owner = nil
            pipe.writeByte()  // readable, and nobody will read it
            var cleanupRan = false
            try loop.executeInLoop(priority: .app) { cleanupRan = true }
            try loop.runUntilIdle()
            precondition(cleanupRan, "lower-priority work was not starved")
            precondition(source.isRemoved)
        }
    }

    /// The same end to end, in a child process with an alarm (the old code
    /// hung here forever): a watcher released off its loop while its
    /// inotify descriptor is readable, then a round trip through the loop.
    @Test func aWatcherlessReadableDescriptorDoesNotStarveTheCleanupHop() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let thread = try LoopThread.start()
            let pipe = TestPipe()
            final class Holder: @unchecked Sendable { var owner: Owner? }
            let holder = Holder()
            let registered = DispatchSemaphore(value: 0)
            try thread.loop.execute {
                let owner = Owner()
                holder.owner = owner
                _ = try! thread.loop.addFileDescriptor(pipe.readEnd, interest: .read, priority: .system, owner: owner) { owner, _ in
                    owner.reads += 1
                }
                registered.signal()
            }
            registered.wait()
            holder.owner = nil  // released off the loop
            pipe.writeByte()
            let roundTrip = DispatchSemaphore(value: 0)
            try thread.loop.execute { roundTrip.signal() }
            roundTrip.wait()
            try thread.stopAndJoin()
        }
    }
}
