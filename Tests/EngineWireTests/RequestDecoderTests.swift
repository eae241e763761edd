import AppLifecycle
import EngineWire
import MainLoopJSON
import Testing
import TestSupport

/// The BEHAVIOUR.md §7 vocabulary is decoded once, for the replay, the socket and
/// `ctl`; each context accepts its forms and words its errors the same way.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RequestDecoderTests {
    private func decode(_ text: String, _ context: RequestContext) throws -> EngineRequest {
        try RequestDecoder.decode(try JSONValue.parse(text).objectValue!, context: context)
    }

    /// `accepts` (the hot path's check, commonest keys first) says what
    /// `forms` (the list the messages print) says, for every key.
    @Test func acceptsIsExactlyTheForms() {
        let keys = ["lifecycle", "system", "input", "app", "query", "fly", "", "System", "queryx", "quer"]
        for context in [RequestContext.scenarioStep, .controlSocket] {
            for key in keys { #expect(context.accepts(key) == context.forms.contains(key), "\(context) \(key)") }
        }
    }

    @Test func eachFormDecodesInTheContextsThatAllowIt() throws {
        #expect(try decode(#"{"lifecycle": "home"}"#, .controlSocket) == .lifecycle(.home))
        #expect(try decode(#"{"input": "tap"}"#, .scenarioStep) == .input("tap"))
        #expect(try decode(#"{"query": "stats"}"#, .controlSocket) == .query(.stats))
        #expect(try decode(#"{"system": {"orientation": "faceUp"}}"#, .scenarioStep) == .system(["orientation": "faceUp"]))
        #expect(try decode(#"{"app": {"timer": "t", "every": 0.5}}"#, .scenarioStep)
                == .app(.timerEvery(label: "t", interval: .milliseconds(500))))
        #expect(try decode(#"{"app": {"submitScheduledTask": "s", "kind": "processing", "after": 2, "requiresExternalPower": true}}"#,
                           .scenarioStep)
                == .app(.submitScheduledTask(.processing("s", earliestBeginAfter: .seconds(2), requiresExternalPower: true))))
        #expect(try decode(#"{"app": {"completeScheduledTask": "s"}}"#, .scenarioStep)
                == .app(.completeScheduledTask(identifier: "s", success: true)))
    }

    @Test(arguments: [
        (#"{"query": "state"}"#, RequestContext.scenarioStep, "'query' is not allowed here"),
        (#"{"app": {"blockMainThread": 1}}"#, .controlSocket, "app 'blockMainThread' is a scenario step"),
        (#"{"app": {"onDidEnterBackground": {"blockMainThread": 1}}}"#, .controlSocket,
         "app 'onDidEnterBackground' is a scenario step"),
        (#"{"fly": 1}"#, .controlSocket, "unknown request 'fly'"),
        (#"{}"#, .controlSocket, "exactly one of lifecycle, system, input, app, query (got nothing)"),
        (#"{"lifecycle": "fly"}"#, .controlSocket, #"unknown lifecycle command "fly""#),
        (#"{"query": "nope"}"#, .controlSocket, #"unknown query "nope" (known: state, stats, values, metrics)"#),
        (#"{"system": {"a": 1, "b": 2}}"#, .controlSocket, "exactly one event kind"),
        (#"{"input": 3}"#, .scenarioStep, "'input' must be a string"),
        (#"{"app": {"timer": "t", "every": 1e-10}}"#, .scenarioStep, "'every' must be more than 0"),
        (#"{"app": {"timer": "t", "after": -1}}"#, .scenarioStep, "'after' must be a number of seconds from 0 to 1000000000 (got -1)"),
        (#"{"app": {"blockMainThread": "x"}}"#, .scenarioStep, #"(got "x")"#),
        (#"{"app": {"submitScheduledTask": "r"}}"#, .scenarioStep, "needs a 'kind', one of appRefresh, processing"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "nightly"}}"#, .scenarioStep, "needs a 'kind'"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "appRefresh", "requiresExternalPower": true}}"#, .scenarioStep,
         "'requiresExternalPower' is for a processing task, not an app refresh"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "requiresNetworkConnectivity": 1}}"#, .scenarioStep,
         "'requiresNetworkConnectivity' must be true or false"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "after": -2}}"#, .scenarioStep, "'after' must be"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "every": 2}}"#, .scenarioStep, "unknown key 'every'"),
        (#"{"app": {"completeScheduledTask": "r", "success": "yes"}}"#, .scenarioStep, "'success' must be true or false"),
    ])
    func malformedRequestsSayWhatIsWrong(text: String, context: RequestContext, expected: String) {
        #expect(throws: RequestError.self) { try decode(text, context) }
        do { _ = try decode(text, context) } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test func timesAreExactDecimalsToTheNanosecond() throws {
        #expect(try SpecTime.duration(try JSONValue.parse("0.3"), field: "at") == .nanoseconds(300_000_000))
        #expect(try SpecTime.duration(try JSONValue.parse("999999999.123456789"), field: "at")
                == .nanoseconds(999_999_999_123_456_789))
        #expect(try SpecTime.duration(try JSONValue.parse("1e-9"), field: "every", positive: true) == .nanoseconds(1))
        #expect(try SpecTime.duration(try JSONValue.parse("4e-10"), field: "at") == .zero, "rounded to the nearest ns")
        #expect(throws: RequestError.self) { try SpecTime.duration(try JSONValue.parse("1000000000.000000001"), field: "at") }
        #expect(throws: RequestError.self) { try SpecTime.duration(try JSONValue.parse("4e-10"), field: "every", positive: true) }
    }
}
