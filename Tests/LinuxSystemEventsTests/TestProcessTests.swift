import Foundation
import Glibc
import Testing
import TestSupport

/// The test harness's own child processes.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct TestProcessTests {
    /// A child that something else in the process reaped (a `waitpid` of
    /// its PID or of -1 elsewhere) reads as ended with status -1: a test
    /// then fails on the value, where a trap would end every test of the run.
    @Test func aChildReapedElsewhereEndsWithStatusMinusOne() throws {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        var status: Int32 = 0
        while waitpid(process.processIdentifier, &status, 0) < 0 && errno == EINTR {}
        #expect(!process.isRunning)
        #expect(process.terminationStatus == -1)
        #expect(process.statusIfEnded == -1)
    }
}
