@testable import AppLifecycle
import Testing
import TestSupport

/// The engine's activity as one value: nested busy sections,
/// transitions, inputs queued meanwhile, and a drain around them.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct EngineActivityTests {
    @Test func nestedSectionsTransitionsAndQueuedInputs() {
        var activity = EngineActivity()
        #expect(activity.state == .idle && activity.isIdle && !activity.isBusy)
        activity.enter()
        activity.enter(transition: true)
        #expect(activity.state == .busy(depth: 2, transitions: 1, queued: false, draining: false))
        #expect(activity.isInTransition)
        activity.noteQueued()
        let innerApplies = activity.leave(transition: true)
        #expect(!innerApplies, "not the outermost section")
        #expect(!activity.isInTransition)
        let outerApplies = activity.leave()
        #expect(outerApplies, "the outermost section applies what was queued")
        #expect(activity.state == .idle)
    }

    @Test func aDrainSurroundsTheSectionsItApplies() {
        var activity = EngineActivity()
        activity.beginDrain()
        #expect(activity.state == .drainingInbox && !activity.isIdle && !activity.isBusy)
        activity.enterFromIdle()
        #expect(activity.state == .busy(depth: 1, transitions: 0, queued: false, draining: true))
        activity.noteQueued()
        let applies = activity.leave()
        #expect(applies, "queued inputs are reported; the drain applies them")
        #expect(activity.state == .drainingInbox)
        activity.endDrain()
        #expect(activity.state == .idle)
    }

    @Test func nothingIsQueuedWhileIdle() {
        var activity = EngineActivity()
        activity.noteQueued()
        activity.enter()
        let applies = activity.leave()
        #expect(!applies, "a note while idle is not kept")
    }
}
