import AppLifecycle
import EngineWire
import Foundation
import Glibc
import MainLoop
import MainLoopJSON
import ScenarioReplay
import SystemNotifications
import Testing
import TestSupport

/// The recorder as a kit part: an application of one's own, its inputs
/// recorded from every path, the file it writes, its bounds.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SessionRecorderTests {
    /// A path in a fresh private directory.
    static func temporaryPath(_ name: String) -> String {
        var template = Array("/tmp/session-recorder-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return directory + "/" + name
    }

    /// Inputs from the API, a poster on another thread, the center and the
    /// interpreter's app actions are all recorded, in order; the file reads
    /// back as a scenario whose replay prints what the live app printed.
    @Test func everyPathIsRecordedAndTheReplayPrintsTheLiveLines() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let application = try Application(loop: loop)
        var live: [JSONObject] = []
        let origin = loop.now
        let observer = ObservationRecorder(timestamp: { ["at": SpecTime.json(.zero + (loop.now - origin))] },
                                           sink: { live.append($0) })
        try observer.attach(to: application)
        let interpreter = RequestInterpreter(application: application, recorder: observer)
        let path = Self.temporaryPath("session.jsonl")
        var problems: [String] = []
        let recorder = try SessionRecorder(application: application, interpreter: interpreter, path: path,
                                           origin: origin) { problems.append($0) }
        try application.perform(.launch)
        let center = application.notifications
        try center.post(.orientation(.faceUp))
        let prepared = try center.prepare(.accessory(id: "dock", connected: true))
        try center.post(prepared)
        try application.deliverInput("tap")
        _ = try interpreter.perform(.app(.timerAfter(label: "t", delay: .milliseconds(5))))
        #expect(throws: RequestInterpreter.Failure.self) { try interpreter.perform(.lifecycle(.launch)) }
        let poster = application.poster
        let thread = TestThread { try? poster.post(.lowPowerMode(true)) }
        thread.join()
        try application.receiveMemoryWarning()
        try application.perform(.home)
        let done = loop.scheduleTimer(after: .milliseconds(20)) { loop.stop() }
        try loop.run()
        _ = done
        try application.perform(.foreground)
        recorder.stop()
        #expect(problems.isEmpty)

        let text = try String(contentsOfFile: path, encoding: .utf8)
        let scenario = try Scenario.parse(text, partial: false)
        let requests = scenario.steps.map { RequestEncoder.keyAndBody($0.request).key }
        #expect(requests == ["lifecycle", "system", "system", "input", "app", "lifecycle", "system", "memoryWarning",
                             "lifecycle", "lifecycle"],
                "\(text)")
        #expect(text.contains(#""accessory":{"id":"dock","connected":true}"#), "a prepared event is written as its plain form")
        let replayed = try ScenarioReplayer.run(scenario)
        #expect(replayed == live, "live:\n\(live)\nreplay:\n\(replayed)")
        #expect(live.contains { $0["timer"] == "t" } && live.contains { $0["rejected"] == "launch" })
        #expect(live.contains { $0["memoryWarning"] != nil }, "a memory warning is an input like the others")
    }

    /// At its size limit the recording writes an end line that says so,
    /// tells its owner once, records nothing more; the app goes on.
    @Test func theSizeLimitEndsTheRecordingSayingSo() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let application = try Application(loop: loop)
        let path = Self.temporaryPath("limited.jsonl")
        var problems: [String] = []
        let recorder = try SessionRecorder(application: application, path: path, maxBytes: 4096) { problems.append($0) }
        try application.perform(.launch)
        for index in 0..<500 { try application.deliverInput("touch-\(index)") }
        #expect(!recorder.isRecording)
        #expect(application.state == .active)
        recorder.stop()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.utf8.count <= 4096)
        #expect(text.hasSuffix(#"{"end":"sizeLimit","maxBytes":4096}"# + "\n"), "\(text.suffix(200))")
        #expect(problems.count == 1 && problems[0].contains("size limit"), "\(problems)")
        let scenario = try Scenario.parse(text, partial: false)
        #expect(scenario.steps.count > 10 && scenario.steps.count < 500)
    }

    /// A size limit above the largest file a replay reads would make a
    /// recording no replay can read: refused, and no file is made. The
    /// largest allowed is taken.
    @Test func aSizeLimitAboveWhatAReplayReadsIsRefused() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let application = try Application(loop: loop)
        let path = Self.temporaryPath("too-large.jsonl")
        #expect {
            try SessionRecorder(application: application, path: path, maxBytes: ScenarioFile.maxFileBytes + 1) { _ in }
        } throws: { error in
            "\(error)".contains("at most \(ScenarioFile.maxFileBytes) bytes")
        }
        #expect(access(path, F_OK) != 0, "no recording was started")
        let largest = try SessionRecorder(application: application, path: path, maxBytes: ScenarioFile.maxFileBytes) { _ in }
        #expect(largest.isRecording)
        largest.stop()
    }

    /// A FIFO (or anything but a regular file) is refused, and so is a
    /// loop whose clock a replay could not reproduce.
    @Test func aFIFOAndAContinuousClockAreRefused() throws {
        let fifo = Self.temporaryPath("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let loop = try MainRunLoop(clockReading: .perCallback)
        let application = try Application(loop: loop)
        #expect { try SessionRecorder(application: application, path: fifo) { _ in } } throws: { error in
            "\(error)".contains("not a regular file")
        }
        let continuous = try Application(loop: try MainRunLoop())
        #expect { try SessionRecorder(application: continuous, path: Self.temporaryPath("r.jsonl")) { _ in } } throws: { error in
            "\(error)".contains("per callback")
        }
    }

    /// A recording cut at every byte: an error naming a line, or (with
    /// `partial`) the whole steps before the cut; and bytes changed by hand
    /// anywhere: read, or refused naming a line. Never anything else.
    @Test func aRecordingCutOrEditedAnywhereIsNamedByItsLine() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let application = try Application(loop: loop)
        let path = Self.temporaryPath("cut.jsonl")
        let recorder = try SessionRecorder(application: application, path: path) { _ in }
        try application.perform(.launch)
        try application.notifications.post(.accessory(id: "dock \"1\"", connected: true))
        try application.notifications.post(.userDefault(key: "font", value: ["size": 12]))
        try application.deliverInput("tap")
        try application.perform(.home)
        recorder.stop()
        let bytes = Array(try String(contentsOfFile: path, encoding: .utf8).utf8)
        let whole = try Scenario.parse(String(decoding: bytes, as: UTF8.self), partial: false)
        #expect(whole.steps.count == 5)
        let headerEnd = bytes.firstIndex(of: UInt8(ascii: "\n"))!
        for cut in 0..<bytes.count {
            let text = String(decoding: bytes[..<cut], as: UTF8.self)
            do {
                _ = try Scenario.parse(text, partial: false)
                Issue.record("a recording cut at byte \(cut) was read")
            } catch {
                // A cut inside the first line is not a recording any more.
                #expect(error.line != nil || cut <= headerEnd, "cut at \(cut): \(error)")
            }
            if cut > headerEnd {
                let partial = try Scenario.parse(text, partial: true)
                let wholeLines = bytes[..<cut].count(where: { $0 == UInt8(ascii: "\n") })
                #expect(partial.steps.count == min(wholeLines - 1, 5), "cut at \(cut)")
            }
        }
        var generator = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            var edited = bytes
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                edited[Int.random(in: 0..<edited.count, using: &generator)] = UInt8.random(in: 0x20...0x7e, using: &generator)
            }
            do {
                _ = try Scenario.parse(String(decoding: edited, as: UTF8.self), partial: false)
            } catch {
                // A recording's line, or (its first bytes changed, so no
                // longer a recording) the JSON error's line.
                #expect(error.line != nil || error.description.contains("at line 1,"), "\(error)")
            }
        }
    }

    /// An end line has exactly its form's keys: an extra key, or a size
    /// limit without a whole `maxBytes`, is refused naming the line.
    @Test func anEndLineHasExactlyItsKeys() throws {
        func parse(_ end: String) throws(ScenarioError) -> Scenario {
            try Scenario.parse(#"{"recording":1}"# + "\n" + end + "\n", partial: false)
        }
        #expect(try parse(#"{"end":"stopped"}"#).steps.isEmpty)
        #expect(try parse(#"{"end":"sizeLimit","maxBytes":4096}"#).steps.isEmpty)
        let refused = [
            (#"{"end":"stopped","x":1}"#, "unknown key 'x'"),
            (#"{"end":"stopped","maxBytes":4}"#, "unknown key 'maxBytes'"),
            (#"{"end":"sizeLimit","maxBytes":4,"x":1}"#, "unknown key 'x'"),
            (#"{"end":"sizeLimit"}"#, "'maxBytes' must be a whole number"),
            (#"{"end":"sizeLimit","maxBytes":-1}"#, "'maxBytes' must be a whole number"),
            (#"{"end":"sizeLimit","maxBytes":1.5}"#, "'maxBytes' must be a whole number"),
            (#"{"end":"sizeLimit","maxBytes":"4"}"#, "'maxBytes' must be a whole number"),
            (#"{"end":"done"}"#, "an end line is"),
        ]
        for (line, problem) in refused {
            #expect(throws: ScenarioError.self, "\(line)") { try parse(line) }
            do {
                _ = try parse(line)
            } catch {
                #expect(error.line == 2 && error.description.contains(problem), "\(line): \(error)")
            }
        }
    }

    /// Exact decimal instants: the fast text is the text, and the value
    /// beside it is what reading the text gives.
    @Test func instantsPrintExactly() {
        var generator = SeededRandom(seed: 5)
        for _ in 0..<20_000 {
            let nanoseconds = Int64.random(in: -(1 << 53)...(1 << 53), using: &generator) >> Int.random(in: 0...50, using: &generator)
            let text = DecimalSeconds.text(nanoseconds: nanoseconds)
            #expect(DecimalSeconds.nanoseconds(text) == nanoseconds, "\(nanoseconds) -> \(text)")
            #expect(!text.hasSuffix("0") || !text.contains("."), "\(text)")
            let json = SpecTime.json(LoopInstant(nanoseconds: nanoseconds))
            #expect(json.numberValue == Double(text), "\(text)")
        }
        #expect(DecimalSeconds.text(nanoseconds: 0) == "0")
        #expect(DecimalSeconds.text(nanoseconds: 1) == "0.000000001")
        #expect(DecimalSeconds.text(nanoseconds: 10_500_000_000) == "10.5")
        #expect(DecimalSeconds.text(nanoseconds: -1_000_000_000) == "-1")
    }
}
