import Glibc
import MainLoopJSON
import ScenarioReplay
import TestSupport
import Testing

/// Mutation fuzzing of the scenario parser and replay: mutants of
/// every conformance file, made by byte edits and by JSON edits (extreme and
/// malformed times among them), must each either replay or be rejected with
/// an error naming the file, and the step (`steps[N]`) when a step was
/// edited. Nothing may crash or hang: the run happens in a child process
/// that an alarm ends after two minutes.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ScenarioFuzzTests {
    @Test func tenThousandMutatedScenariosAreReplayedOrRejectedWithTheirPlace() async {
        await #expect(processExitsWith: .success) {
            alarm(120)
            let failures = ScenarioFuzzer.run(mutants: 10_000)
            for failure in failures.prefix(5) { print("fuzz failure: \(failure)") }
            exit(failures.isEmpty ? 0 : 1)
        }
    }
}

enum ScenarioFuzzer {
    /// The fake path mutants are reported under.
    static let path = "/fuzz/mutant.json"

    /// Replays `mutants` mutants; returns a description of each that broke a rule.
    static func run(mutants: Int) -> [String] {
        let seeds = ScenarioFiles.conformance.compactMap { try? ScenarioFile.read($0) }
        precondition(!seeds.isEmpty, "no conformance files found")
        var random = SeededRandom(seed: 2026)
        var failures: [String] = []
        var rejected = 0
        for index in 0..<mutants {
            let seed = seeds[index % seeds.count]
            let (text, editedStep) = index % 2 == 0 ? byteMutant(seed, &random) : jsonMutant(seed, &random)
            switch ScenarioFile.check(text: text, path: path, limits: ReplayLimits(maxObservations: 2_000)) {
            case .passed, .failed, .noExpectation:
                break
            case .error(let message):
                rejected += 1
                if !message.hasPrefix(path + ": ") {
                    failures.append("mutant \(index): error without the file: \(message)")
                } else if let editedStep, !message.contains("steps[") && !message.contains("'steps'")
                            && !message.contains("config") && !message.contains("initial") {
                    failures.append("mutant \(index): step \(editedStep) edited, error without a step: \(message)")
                }
            }
        }
        if rejected < mutants / 4 { failures.append("only \(rejected) of \(mutants) mutants were rejected: the mutator is too gentle") }
        return failures
    }

    /// Edits bytes: flips, deletions, duplications, insertions of JSON
    /// punctuation, truncation.
    static func byteMutant(_ text: String, _ random: inout SeededRandom) -> (String, Int?) {
        var bytes = Array(text.utf8)
        for _ in 0..<(1 + random.below(3)) where !bytes.isEmpty {
            let at = random.below(bytes.count)
            switch random.below(5) {
            case 0: bytes[at] ^= UInt8(1 << random.below(8))
            case 1: bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(8)))
            case 2: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 1 + random.below(16))], at: at)
            case 3: bytes.insert(random.pick(Array("{}[],:\"-0e.\\".utf8)), at: at)
            default: bytes.removeSubrange(at...)
            }
        }
        return (String(decoding: bytes, as: UTF8.self), nil)
    }

    /// Edits one value inside a step (or the config): extreme numbers, wrong
    /// types, unknown names, removed keys, deep nesting.
    static func jsonMutant(_ text: String, _ random: inout SeededRandom) -> (String, Int?) {
        guard case .object(var root) = (try? JSONValue.parse(text)) ?? .null,
              case .array(var steps) = root["steps"] ?? .null, !steps.isEmpty else { return (text, nil) }
        let replacements: [JSONValue] = [
            -1, 1e10, 1e300, 1e-10, 1e-9, 0, 999999999.9999999999, 1000000000.000000001, "x", .null, true, [], [:],
            "launch", "home", "fly", ["every": 1e-9], ["timer": "t", "every": 0], ["blockMainThread": 1e9],
            .array(Array(repeating: .array([]), count: 3)),
        ]
        if random.chance(15) {
            var config = root["config"]?.objectValue ?? JSONObject()
            let key = random.pick(["backgroundTaskLimit", "expirationLead", "didEnterBackgroundLimit", "customKinds", "backgroundModes"])
            config[key] = random.pick(replacements)
            root["config"] = .object(config)
            return (JSONValue.object(root).jsonText, nil)
        }
        let index = random.below(steps.count)
        guard case .object(var step) = steps[index] else { return (text, nil) }
        let key = random.pick(step.orderedKeys)
        switch random.below(4) {
        case 0: step[key] = random.pick(replacements)
        case 1: step[key] = nil
        case 2: step[random.pick(["lifecycle", "system", "input", "app", "query", "at"])] = random.pick(replacements)
        default:
            if case .object(var inner) = step[key] ?? .null, let innerKey = inner.orderedKeys.first {
                inner[innerKey] = random.pick(replacements)
                step[key] = .object(inner)
            } else {
                step[key] = random.pick(replacements)
            }
        }
        steps[index] = .object(step)
        root["steps"] = .array(steps)
        return (JSONValue.object(root).jsonText, index)
    }
}
