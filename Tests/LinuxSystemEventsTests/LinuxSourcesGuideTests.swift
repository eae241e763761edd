// The code of the guide "Wiring the Linux sources to your own center"
// (Sources/LinuxSystemEvents/LinuxSystemEvents.docc/WiringLinuxSources.md),
// verbatim from `import MainLoopKit` to the end of MyService
// (scripts/check-doc-snippets.sh checks it), kept compiling and working here.
import Foundation
import Glibc
import Testing
import TestSupport
import MainLoopKit

final class MyService {
    let application: Application
    private let watcher: FileWatcher
    private let time: SignificantTimeChangeSource
    private let locale: LocaleSource
    private let defaults: UserDefaultsMonitor

    init(loop: MainRunLoop, defaultsFile: String, localeFile: String, zoneFiles: [String]) throws {
        application = try Application(loop: loop)
        let center = application.notifications
        // Every source posts through one closure: a refused event is
        // reported, never dropped silently.
        let post: (SystemEvent) -> Void = { event in
            do { try center.post(event) } catch { print("cannot post \(event.kind): \(error)") }
        }
        watcher = try FileWatcher(loop: loop)               // one inotify descriptor for all files
        time = try SignificantTimeChangeSource(loop: loop, clock: SystemWallClock(), watcher: watcher,
                                               zoneFiles: zoneFiles, post: post)
        locale = try LocaleSource(path: localeFile, watcher: watcher, post: post)
        defaults = try UserDefaultsMonitor(store: UserDefaultsStore(path: defaultsFile), watcher: watcher,
                                           post: post, onError: { print("defaults: \($0)") })
        // The system's values before launch: not notifications, the baseline.
        try center.setInitialValue(.locale(locale.identifier))
        for event in defaults.initialEvents { try center.setInitialValue(event) }
    }

    /// After the process was stopped, or on SIGHUP: re-read everything.
    func reloadSources() {
        locale.reload()
        time.recheck()
        defaults.reload()
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct LinuxSourcesGuideTests {
    @Test func theGuidesServiceHoldsAndMergesADefaultsChange() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.file("locale"), "LANG=en_GB.UTF-8\n")
        let loop = try MainRunLoop()
        defer { try? loop.shutdown() }
        let service = try MyService(loop: loop, defaultsFile: directory.file("d.json"),
                                    localeFile: directory.file("locale"), zoneFiles: [directory.file("localtime")])
        var received: [String] = []
        try service.application.notifications.addObserver(for: .userDefaults) { received.append("\($0.name) merged \($0.merged)") }
        try service.application.perform(.launch)
        try service.application.perform(.home)                  // suspended: held from here
        let store = UserDefaultsStore(path: directory.file("d.json"))
        try store.set(1, forKey: "volume")                        // another process would do the same
        try store.set(2, forKey: "volume")
        service.reloadSources()
        try loop.runUntilIdle()
        #expect(received.isEmpty, "held while suspended")
        try service.application.perform(.foreground)
        #expect(received == ["userDefaultsDidChange merged 1"])
        #expect(try service.application.notifications.currentValue(of: .locale) == .string("en_GB"))
    }
}
