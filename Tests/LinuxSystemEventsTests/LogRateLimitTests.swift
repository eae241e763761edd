import MainLoopKit
import MainLoop
import Testing
import TestSupport

/// The log rate limit every repeating log line goes through.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct LogRateLimitTests {
    @Test func admitsABurstPerWindowThenSaysHowManyWereLeftOut() {
        var limit = LogRateLimit(burst: 2, window: .seconds(10))
        let start = LoopInstant(nanoseconds: 0)
        #expect(limit.admittedNote(at: start) == "")
        #expect(limit.admittedNote(at: start + .seconds(1)) == "")
        #expect(limit.admittedNote(at: start + .seconds(2)) == nil)
        #expect(limit.admittedNote(at: start + .seconds(3)) == nil)
        #expect(limit.admittedNote(at: start + .seconds(11)) == " (2 similar lines left out)", "a new window")
        #expect(limit.admittedNote(at: start + .seconds(12)) == "")
    }
}
