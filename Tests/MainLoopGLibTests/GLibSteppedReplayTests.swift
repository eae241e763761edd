import CGLib
import FileSupport
import Glibc
import MainLoopJSON
import ScenarioReplay
import Testing
import TestSupport

/// Every conformance scenario, replayed one step per GLib idle callback of
/// a `GMainLoop`: the replay, stepped from GLib's loop, prints exactly its
/// expected lines.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct GLibSteppedReplayTests {
    static let conformance: [String] = {
        let file = "\(#filePath)"
        let tests = String(file[..<file.lastIndex(of: "/")!])
        let directory = tests + "/../ScenarioReplayTests/Conformance"
        return (DirectoryNames.list(directory) { $0.hasSuffix(".json") } ?? []).map { directory + "/" + $0 }.sorted()
    }()

    @Test func theConformanceFolderIsFound() {
        #expect(Self.conformance.count >= 27 + 15)  // the shared vectors and at least fifteen of our own
    }

    @Test(arguments: conformance)
    func aReplaySteppedFromAGMainLoopPrintsItsExpectedLines(path: String) throws {
        let scenario = try Scenario.parse(try ScenarioFile.read(path))
        let expected = try #require(scenario.expect, "\(path) has no expectation")
        var lines: [JSONObject] = []
        let stepper = try ScenarioStepper(scenario) { line in
            lines.append(line)
            return true
        }
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let glibLoop = g_main_loop_new(context, 0)!
        defer { g_main_loop_unref(glibLoop) }
        var steps = 0
        var failure: ScenarioError?
        addIdle(to: context) {
            do throws(ScenarioError) {
                if try stepper.step() {
                    steps += 1
                    return true
                }
            } catch {
                failure = error
            }
            g_main_loop_quit(glibLoop)
            return false
        }
        g_main_loop_run(glibLoop)
        #expect(failure == nil)
        #expect(steps == scenario.steps.count)
        #expect(ConformanceCheck.difference(expected: expected, actual: lines) == nil, "\(path)")
    }
}
