import AppLifecycle
import Dispatch
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct ObserverTests {
    @Test func liveDeliveryIsInArrivalOrderToAllAndPerKindObservers() throws {
        let h = try CenterHarness()
        var localeOnly: [String] = []
        try h.observeAll()
        try h.center.addObserver(for: .locale) { localeOnly.append(CenterHarness.describe($0)) }
        try h.app.perform(.launch)
        try h.post(.locale("fr_FR"), .orientation(.faceUp), .locale("de_DE"))
        #expect(h.take() == [#"currentLocaleDidChange {"locale":"fr_FR"} x1"#,
                             #"orientationDidChange {"orientation":"faceUp"} x1"#,
                             #"currentLocaleDidChange {"locale":"de_DE"} x1"#])
        #expect(localeOnly.count == 2)
    }

    @Test func removingObserversWithTokensIncludingDuringDelivery() throws {
        let h = try CenterHarness()
        try h.app.perform(.launch)
        var log: [String] = []
        var second: NotificationObserverToken!
        let first = try h.center.addObserver { _ in
            log.append("first")
            h.center.removeObserver(second)  // removed mid-delivery: gets nothing further
        }
        second = try h.center.addObserver { _ in log.append("second") }
        try h.post(.proximity(true))
        #expect(log == ["first"])
        #expect(h.center.removeObserver(first))
        #expect(!h.center.removeObserver(first), "a second removal reports an unknown token")
        try h.post(.proximity(false))
        #expect(log == ["first"])
    }

    /// A notification reaches its kind's observers, then the every-kind
    /// ones, each group in registration order, however the registrations
    /// interleave; a kind with no observers of its own reaches only the
    /// every-kind ones. (The registry lays each kind's run out with the
    /// every-kind observers after it, so this pins that layout.)
    @Test func kindObserversComeBeforeEveryKindObserversInRegistrationOrder() throws {
        let h = try CenterHarness()
        try h.app.perform(.launch)
        var log: [String] = []
        try h.center.addObserver { log.append("all-1 \($0.name)") }
        try h.center.addObserver(for: .locale) { log.append("locale-1 \($0.name)") }
        try h.center.addObserver(for: .orientation) { log.append("orientation-1 \($0.name)") }
        let allTwo = try h.center.addObserver { log.append("all-2 \($0.name)") }
        try h.center.addObserver(for: .locale) { log.append("locale-2 \($0.name)") }
        try h.post(.locale("fr_FR"), .orientation(.faceUp), .proximity(true))
        #expect(log == ["locale-1 currentLocaleDidChange", "locale-2 currentLocaleDidChange",
                        "all-1 currentLocaleDidChange", "all-2 currentLocaleDidChange",
                        "orientation-1 orientationDidChange", "all-1 orientationDidChange", "all-2 orientationDidChange",
                        "all-1 proximityStateDidChange", "all-2 proximityStateDidChange"])
        log.removeAll()
        #expect(h.center.removeObserver(allTwo))
        try h.post(.locale("de_DE"), .proximity(false))
        #expect(log == ["locale-1 currentLocaleDidChange", "locale-2 currentLocaleDidChange",
                        "all-1 currentLocaleDidChange", "all-1 proximityStateDidChange"])
    }

    /// An every-kind observer removed by a kind's observer during a delivery
    /// gets nothing from it, whichever kind is delivered.
    @Test func anEveryKindObserverRemovedByAKindObserverGetsNothingFurther() throws {
        let h = try CenterHarness()
        try h.app.perform(.launch)
        var log: [String] = []
        var all: NotificationObserverToken!
        try h.center.addObserver(for: .locale) { _ in
            log.append("locale")
            h.center.removeObserver(all)
        }
        all = try h.center.addObserver { log.append("all \($0.name)") }
        try h.post(.orientation(.faceUp))
        #expect(log == ["all orientationDidChange"])
        try h.post(.locale("fr_FR"), .orientation(.faceDown))
        #expect(log == ["all orientationDidChange", "locale"])
    }

    /// Engine inputs take effect in the order they were issued (on the loop
    /// thread, before the call returns); app work posted earlier runs later,
    /// when the loop reaches it.
    @Test func inputsTakeEffectInIssueOrderBeforeAppWorkQueuedEarlier() throws {
        let h = try CenterHarness()
        try h.app.perform(.launch)
        var order: [String] = []
        try h.center.addObserver { order.append($0.name) }
        final class Delegate: ApplicationDelegate {
            var log: (String) -> Void = { _ in }
            func application(_ application: Application, didReceiveInput input: String) { log("input") }
        }
        let delegate = Delegate()
        delegate.log = { order.append($0) }
        h.app.delegate = delegate
        try h.app.post { order.append("app work") }
        try h.app.deliverInput("tap")
        try h.center.post(.locale("fr_FR"))
        #expect(order == ["input", "currentLocaleDidChange"], "both applied before their calls returned")
        try h.loop.runUntilIdle()
        #expect(order == ["input", "currentLocaleDidChange", "app work"])
    }

    @Test func eventsFromOtherThreadsAreDeliveredOnTheLoop() throws {
        let loop = try MainRunLoop()
        let app = try Application(loop: loop)
        let center = SystemNotificationCenter(application: app)
        try app.perform(.launch)
        var received: [String] = []
        try center.addObserver {
            precondition(loop.inLoop)
            received.append($0.payload["level"]!.jsonText)
            if received.count == 100 { loop.stop() }
        }
        let poster = center.poster
        let producer = DispatchGroup()
        DispatchQueue.global().async(group: producer) {
            for index in 1...100 { try! poster.post(.batteryLevel(Double(index) / 100)) }
        }
        try loop.run()
        producer.wait()
        #expect(received.count == 100)
        #expect(received.last == "1")
    }

    @Test func unknownKindsAndMalformedEventsAreRejectedWithoutChangingAnything() throws {
        let h = try CenterHarness()
        #expect(throws: NotificationCenterError.unknownKind("weather")) {
            try h.center.post(SystemEvent(kind: "weather", value: "rain"))
        }
        #expect(throws: NotificationCenterError.self) { _ = try h.center.decodeEvent(["orientation": "sideways"]) }
        #expect(throws: NotificationCenterError.self) { _ = try h.center.decodeEvent(["orientation": "faceUp", "locale": "x"]) }
        #expect(throws: NotificationCenterError.appRunning) {
            try h.app.perform(.launch)
            try h.center.setInitialValue(.locale("x"))
        }
        #expect(try h.center.currentValue(of: .orientation) == "portrait")
    }
}
