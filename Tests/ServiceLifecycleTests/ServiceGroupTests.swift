import Testing
import TestSupport

/// MainLoop inside a swift-service-lifecycle ServiceGroup.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ServiceGroupTests {
    /// The group owns SIGTERM: a real SIGTERM shuts the group down
    /// gracefully, the app gets willTerminate once, the process exits 0; the
    /// loop refuses to take SIGTERM from the group.
    @Test func sigtermShutsTheGroupDownThroughTheLifecycle() throws {
        let result = try BuiltExecutable.run("ServiceGroupProbe", [], timeout: 30)
        #expect(result.status == 0, "stdout: \(result.output)\nstderr: \(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == "willTerminate" }.count == 1, "\(lines)")
        #expect(lines.first { $0.hasPrefix("addSignal(SIGTERM)") }?.contains("belongs to the ServiceGroup") == true, "\(lines)")
        #expect(!lines.contains("the loop took SIGTERM"))
        #expect(lines.last == "group finished", "\(lines)")
        let order = ["didBecomeActive", "willTerminate", "group finished"].map { lines.firstIndex(of: $0) ?? -1 }
        #expect(order == order.sorted() && !order.contains(-1), "\(lines)")
    }

    /// A setUp that throws stops the loop and fails the group with its error.
    @Test func aFailingSetUpFailsTheGroupWithItsError() throws {
        let result = try BuiltExecutable.run("ServiceGroupProbe", ["setup-fails"], timeout: 30)
        #expect(result.status == 1, "stdout: \(result.output)\nstderr: \(result.error)")
        #expect(result.output.contains("group failed") && result.output.contains("the app could not be built"), "\(result.output)")
        #expect(!result.output.contains("didBecomeActive"))
    }

    /// The app on the main thread's loop (placement .mainLoop,
    /// inside MainRunLoop.runMain), a @MainActor delegate, and a part the
    /// service keeps until shutdown and releases on the main thread.
    @Test func onTheMainLoopWithAMainActorDelegateAndAKeptPart() throws {
        let result = try BuiltExecutable.run("ServiceGroupMainLoopProbe", [], timeout: 30)
        #expect(result.status == 0, "stdout: \(result.output)\nstderr: \(result.error)")
        #expect(result.output.split(separator: "\n").map(String.init) == [
            "didBecomeActive main=true",
            "willTerminate main=true",
            "part released main=true",
            "group finished",
            "main loop stopped",
        ])
    }
}
