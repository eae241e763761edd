import AppLifecycle
import MainLoop
import XCTest

/// The same helper from XCTest. corelibs-xctest cannot run a `@MainActor`
/// test method (its test discovery aborts on the isolated method type), but
/// it runs test methods on the main thread, where the main actor is:
/// `MainActor.assumeIsolated` enters it, checked.
final class MainActorDelegateXCTests: XCTestCase {
    func testAMainActorDelegateIsTestedInProcess() throws {
        try MainActor.assumeIsolated {
            let delegate = RecordingDelegate()
            let application = try Application.testingMainActorDelegate(delegate)
            try application.perform(.launch)
            try application.perform(.home)
            try application.perform(.foreground)
            XCTAssertEqual(delegate.calls, ["didBecomeActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"])
        }
    }
}
