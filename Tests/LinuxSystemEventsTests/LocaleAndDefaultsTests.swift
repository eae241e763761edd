import Foundation
import Glibc
import MainLoopKit
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct LocaleSourceTests {
    @Test func aRealLocaleFileChangePostsTheNewIdentifier() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("locale")
        writeFile(file, "# comment\nLANG=en_GB.UTF-8\n")
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var posted: [String] = []
        let source = try LocaleSource(path: file, watcher: watcher) { event in
            posted.append(event.value.stringValue!)
            if posted.count == 2 { loop.stop() }
        }
        #expect(source.identifier == "en_GB")
        try loop.executeInLoop {
            writeFile(file, "LANG=fr_FR.UTF-8\n")
        }
        loop.scheduleTimer(after: .milliseconds(100)) { writeFile(file, "LANG=fr_FR.UTF-8\nLC_ALL=\"de_DE.UTF-8@euro\"\n") }
        loop.scheduleTimer(after: .seconds(5)) { loop.stop() }
        try loop.run()
        #expect(posted == ["fr_FR", "de_DE"])
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct UserDefaultsStoreTests {
    @Test func typedGetSetRemoveAndAtomicReplacement() throws {
        let directory = TemporaryDirectory()
        let store = UserDefaultsStore(path: directory.file("nested/dir/app.json"))
        #expect(try store.dictionary().isEmpty)
        try store.set(14, forKey: "fontSize")
        try store.set("dark", forKey: "theme")
        try store.set(true, forKey: "sync")
        try store.set([1, 2], forKey: "list")
        #expect(try store.integer(forKey: "fontSize") == 14)
        #expect(try store.string(forKey: "theme") == "dark")
        #expect(try store.bool(forKey: "sync") == true)
        #expect(try store.string(forKey: "fontSize") == nil, "wrong type reads as nil")
        try store.removeValue(forKey: "theme")
        #expect(try store.value(forKey: "theme") == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.file("nested/dir")).sorted()
        #expect(names == ["app.json", "app.json.lock"], "no temporary file is left behind")
    }

    @Test func aCorruptFileIsReportedAndNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("app.json")
        writeFile(path, "{\"fontSize\": 14,")
        let store = UserDefaultsStore(path: path)
        #expect(throws: UserDefaultsError.self) { try store.dictionary() }
        #expect(throws: UserDefaultsError.self) { try store.set(1, forKey: "x") }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"fontSize\": 14,")
        writeFile(path, "[1]")
        do { _ = try store.dictionary() } catch { #expect(error.description.contains("not an object")) }
        #expect(throws: UserDefaultsError.invalidDomain("../etc")) { try UserDefaultsStore(domain: "../etc") }
    }

    @Test func concurrentWritersFromTwoProcessesLoseNoKeys() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("shared.json")
        let writers = try (0..<2).map { writer in
            let process = TestProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "for i in $(seq 0 24); do \"$0\" defaults --file \"$1\" write w\(writer)-$i $i || exit 1; done",
                                 BuiltTool.path, path]
            try process.run()
            return process
        }
        for process in writers { #expect(process.waitForExit(), "a writer did not finish within 60 s") }
        #expect(writers.allSatisfy { $0.statusIfEnded == 0 })
        #expect(try UserDefaultsStore(path: path).dictionary().count == 50)
    }

    @Test func theMonitorPostsOneEventPerChangedKeyFromAnotherWriter() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("app.json")
        let writer = UserDefaultsStore(path: path)
        try writer.set(12, forKey: "fontSize")
        try writer.set("light", forKey: "theme")
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var events: [String] = []
        var errors: [String] = []
        let monitor = try UserDefaultsMonitor(store: UserDefaultsStore(path: path), watcher: watcher, post: { event in
            events.append("\(event.subject!)=\(event.value.jsonText)")
            if events.count == 3 { loop.stop() }
        }, onError: { errors.append($0.description) })
        #expect(monitor.initialEvents.count == 2)
        try loop.executeInLoop {
            try? writer.set(16, forKey: "fontSize")
        }
        loop.scheduleTimer(after: .milliseconds(50)) { writeFile(path, "not json") }
        loop.scheduleTimer(after: .milliseconds(100)) {
            writeFile(path, #"{"fontSize":16,"cache":"on"}"#)
        }
        loop.scheduleTimer(after: .seconds(5)) { loop.stop() }
        try loop.run()
        #expect(events == ["fontSize=16", "theme=null", "cache=\"on\""])
        #expect(errors.count == 1 && errors[0].contains("corrupt"))
    }
}
