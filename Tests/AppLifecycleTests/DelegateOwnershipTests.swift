import AppLifecycle
import MainLoop
import Testing
import TestSupport

/// The application keeps its delegate (a delegate passed inline
/// was held weakly, released at once, and the app ran with no delegate).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct DelegateOwnershipTests {
    /// Records callbacks into a box the test keeps (not the delegate).
    final class Recorder: ApplicationDelegate {
        final class Log { var lines: [String] = [] }
        let log: Log
        init(_ log: Log) { self.log = log }
        func applicationDidFinishLaunching(_ application: Application) { log.lines.append("didFinishLaunching") }
        func applicationDidBecomeActive(_ application: Application) { log.lines.append("didBecomeActive") }
        func applicationWillTerminate(_ application: Application) { log.lines.append("willTerminate") }
    }

    @Test func aDelegatePassedInlineReceivesItsCallbacks() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = Recorder.Log()
        let application = try Application(loop: loop, delegate: Recorder(log))
        try application.perform(.launch)
        try application.perform(.terminate)
        #expect(log.lines == ["didFinishLaunching", "didBecomeActive", "willTerminate"])
    }

    @Test func settingTheDelegateToNilReleasesIt() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop, delegate: Recorder(Recorder.Log()))
        weak var released: Recorder?
        released = application.delegate as? Recorder
        #expect(released != nil)
        application.delegate = nil
        #expect(released == nil)
    }
}
