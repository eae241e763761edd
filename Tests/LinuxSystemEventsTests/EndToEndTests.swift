import Foundation
import Glibc
import MainLoopJSON
import Testing
import TestSupport

/// `mainloop run` as a real process, driven by `mainloop ctl` and
/// `mainloop defaults` processes and real file changes.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct EndToEndTests {
    @Test func suspendChangeEverythingFromOutsideAndResumeToOneMergedNotificationPerKind() throws {
        let directory = TemporaryDirectory()
        let socket = directory.file("s.sock"), defaults = directory.file("d.json"), locale = directory.file("locale")
        let output = directory.file("out.jsonl")
        writeFile(locale, "LANG=en_US.UTF-8\n")
        writeFile(defaults, #"{"fontSize":12,"theme":"light"}"#)
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let service = TestProcess()
        service.executableURL = URL(fileURLWithPath: BuiltTool.path)
        service.arguments = ["run", "--socket", socket, "--defaults-file", defaults, "--locale-file", locale,
                             "--zone-file", directory.file("localtime")]
        service.standardOutput = FileHandle(forWritingAtPath: output)
        service.standardError = FileHandle.nullDevice
        try service.run()
        defer { if service.isRunning { service.terminate() } }
        #expect(eventually { FileManager.default.fileExists(atPath: socket) })

        func ctl(_ words: String...) throws -> String {
            let result = try BuiltTool.run(["ctl", "--socket", socket] + words)
            #expect(result.status == 0, "ctl \(words): \(result)")
            return result.output
        }
        func observations() -> [JSONObject] {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue }
        }

        #expect(try ctl("home").contains("suspended"))
        _ = try ctl("orientation", "landscapeLeft")
        _ = try ctl("orientation", "faceUp")
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "write", "fontSize", "14"]).status == 0)
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "write", "fontSize", "16"]).status == 0)
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "write", "theme", "dark"]).status == 0)
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "delete", "theme"]).status == 0)
        writeFile(locale, "LANG=fr_FR.UTF-8\n")
        usleep(50_000)
        writeFile(locale, "LANG=ja_JP.UTF-8\n")
        _ = try ctl("locale", "ja_JP")  // unchanged by now: ignored, not merged
        // Abuse while suspended: the held notifications must survive.
        let garbage = try BuiltTool.run(["ctl", "--socket", socket, "{\"lifecycle\": "])
        #expect(garbage.status != 0)
        #expect(try BuiltTool.run(["ctl", "--socket", socket, "launch"]).status == 1, "launch is rejected while suspended")
        #expect(eventually { (try? ctl("state"))?.contains("\"heldSlots\":5") == true }, "orientation, defaults (+2 keys), locale")
        #expect(try ctl("foreground").contains("active"))
        // The second didBecomeActive (after launch's) ends the resume sequence.
        #expect(eventually { observations().filter { $0["callback"] == "didBecomeActive" }.count == 2 })

        let notifications = observations().filter { $0["notification"] != nil }
        let names = notifications.compactMap { $0["notification"]?.stringValue }
        #expect(names == ["orientationDidChange", "userDefaultsDidChange", "currentLocaleDidChange"], "\(notifications)")
        #expect(notifications[0]["orientation"] == "faceUp" && notifications[0]["merged"] == 2)
        #expect(notifications[1]["changed"] == .object(["fontSize": 16, "theme": .null]) && notifications[1]["merged"] == 4)
        #expect(notifications[2]["locale"] == "ja_JP" && notifications[2]["merged"] == 2)

        service.terminate()  // SIGTERM
        #expect(service.waitForExit(), "the service did not exit within 60 s of SIGTERM")
        #expect(service.statusIfEnded == 0)
        #expect(observations().suffix(2).compactMap { $0["callback"] ?? $0["state"] } == ["willTerminate", "notRunning"])
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed on exit")
    }

    @Test func runInTheBackgroundRejectsALaterLaunch() throws {
        let directory = TemporaryDirectory()
        let socket = directory.file("s.sock")
        let service = TestProcess()
        service.executableURL = URL(fileURLWithPath: BuiltTool.path)
        service.arguments = ["run", "--background", "--socket", socket, "--defaults-file", directory.file("d.json"),
                             "--locale-file", directory.file("locale"), "--zone-file", directory.file("localtime")]
        service.standardOutput = FileHandle.nullDevice
        service.standardError = FileHandle.nullDevice
        try service.run()
        defer {
            service.terminate()
            #expect(service.waitForExit(), "the service did not exit within 60 s of SIGTERM")
        }
        #expect(eventually { FileManager.default.fileExists(atPath: socket) })
        let launch = try BuiltTool.run(["ctl", "--socket", socket, "launch"])
        #expect(launch.status == 1)
        #expect(launch.output.contains("'launch' is not allowed in state 'suspended'"))
    }

    /// What the demo shows, not how fast: a time limit here failed beside
    /// a CPU-bound process (the run's own bound catches a hang).
    @Test func theDemoRunsAndShowsMergedNotifications() throws {
        let result = try BuiltTool.run(["demo", "--pace", "40"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("orientationDidChange {\"orientation\":\"landscapeRight\"}   ← merged from 3 events"))
        #expect(result.output.contains("userDefaultsDidChange {\"changed\":{\"fontSize\":16}}   ← merged from 4 events"))
        #expect(result.output.contains("thermalStateDidChange {\"thermalState\":\"serious\"}   ← merged from 2 events"))
        #expect(result.output.contains("powerStateDidChange {\"lowPowerMode\":true}"))
        #expect(result.output.contains("input discarded: tap-1"))
        #expect(result.output.contains("input delivered: tap-2"))
    }
}
