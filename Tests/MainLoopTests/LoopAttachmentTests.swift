import MainLoop
import Testing
import TestSupport

/// A library's per-loop state: made once, kept with the loop, told once of
/// its shutdown (what MainLoopNIO keeps its EventLoop views in).
@Suite("Loop attachments", .ownThread, .timeLimit(.minutes(2)))
struct LoopAttachmentTests {
    final class Probe: LoopAttachment, @unchecked Sendable {
        // Why @unchecked: the count is reached only under the lock.
        let shutdowns = LockedValue(0)
        func loopDidShutDown() { shutdowns.withLock { $0 += 1 } }
        var shutdownCount: Int { shutdowns.withLock { $0 } }
    }

    final class OtherProbe: LoopAttachment, Sendable {
        func loopDidShutDown() {}
    }

    @Test func oneAttachmentPerTypeMadeOnce() throws {
        let loop = try MainRunLoop(deterministic: true)
        var made = 0
        let first = loop.attachment(Probe.self) { made += 1; return Probe() }
        let second = loop.attachment(Probe.self) { made += 1; return Probe() }
        _ = loop.attachment(OtherProbe.self) { OtherProbe() }
        #expect(first === second)
        #expect(made == 1)
    }

    @Test func toldOnceWhenTheLoopShutsDownAndAtOnceWhenMadeAfter() throws {
        let loop = try MainRunLoop(deterministic: true)
        let probe = loop.attachment(Probe.self) { Probe() }
        #expect(probe.shutdownCount == 0)
        try loop.shutdown()
        #expect(probe.shutdownCount == 1)
        let late = loop.attachment(OtherProbe.self) { OtherProbe() }
        _ = late
        let again = loop.attachment(Probe.self) { Probe() }
        #expect(again === probe && probe.shutdownCount == 1)
    }

    @Test func aLoopDroppedWithoutShutdownTellsItsAttachments() throws {
        var loop: MainRunLoop? = try MainRunLoop(deterministic: true)
        let probe = loop!.attachment(Probe.self) { Probe() }
        loop = nil
        #expect(probe.shutdownCount == 1)
    }

    @Test func anAttachmentMadeAfterShutdownIsToldAtOnce() throws {
        let loop = try MainRunLoop(deterministic: true)
        try loop.shutdown()
        let probe = loop.attachment(Probe.self) { Probe() }
        #expect(probe.shutdownCount == 1)
    }
}
