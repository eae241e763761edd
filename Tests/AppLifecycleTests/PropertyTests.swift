import AppLifecycle
import MainLoop
import TestSupport
import Testing

/// Which command each state accepts: the table of docs/BEHAVIOUR.md §1,
/// written here as data, independently of `LifecycleStateMachine` (the code
/// under test must not be its own oracle).
let acceptedCommands: [AppState: Set<LifecycleCommand>] = [
    .notRunning: [.launch, .launchInBackground],
    .inactive: [.resumeFromInterrupt, .home, .terminate],
    .active: [.interrupt, .home, .terminate],
    .background: [.foreground, .terminate],
    .suspended: [.foreground, .wake, .terminate, .purge],
]

/// Random command and action sequences (seeded, so failures reproduce):
/// the app only ever is in one of the five states, every transition is
/// either in the §1 table or rejected without effect, and app code never
/// runs while suspended or not running.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PropertyTests {
    @Test(arguments: 0..<40)
    func randomSequencesStayDefinedAndNeverRunAppCodeWhileSuspended(seed: Int) throws {
        var random = SeededRandom(state: UInt64(seed))
        let h = try Harness {
            $0.backgroundTaskLimit = .seconds(30)
            $0.backgroundModes = ["audio", .voip]
        }
        var tokens: [BackgroundTaskToken] = []
        for _ in 0..<300 {
            let before = h.app.state
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let command = LifecycleCommand.allCases.randomElement(using: &random)!
                let inTable = acceptedCommands[before]!.contains(command)
                do throws(LifecycleError) {
                    try h.app.perform(command)
                    #expect(inTable, "\(command) from \(before) was accepted but is not in the table")
                } catch {
                    #expect(!inTable, "\(command) from \(before) is in the table but was refused: \(error)")
                    #expect(error == .commandNotAllowed(command: command, state: before))
                    #expect(h.app.state == before, "a rejected command changed the state")
                }
            case 4:
                if let token = try? h.app.beginBackgroundTask(name: "t", expirationHandler: { [unowned h] in
                    h.appCode("expired")
                }) { tokens.append(token) }
            case 5:
                if let token = tokens.popLast() { try? h.app.endBackgroundTask(token) }
            case 6:
                _ = try? h.app.scheduleTimer(after: .seconds(Int.random(in: 1...20, using: &random))) { [unowned h] in
                    h.appCode("timer")
                }
                try? h.app.post { [unowned h] in h.appCode("posted") }
            case 7:
                if Bool.random(using: &random) { try? h.app.startService("audio") } else { try? h.app.stopService("audio") }
                try? h.app.deliverInput("tap")
            default:
                try h.advance(to: h.now + Double(Int.random(in: 1...15, using: &random)))
            }
            try h.loop.runUntilIdle()
            #expect(AppState.allCases.contains(h.app.state))
            if h.app.state == .suspended {
                #expect(h.app.openBackgroundTaskNames.isEmpty && h.app.services.isEmpty,
                        "suspended while something should keep the app running")
            }
        }
        #expect(h.appCodeWhileNotRunning.isEmpty, "app code ran while not running: \(h.appCodeWhileNotRunning)")
    }
}
