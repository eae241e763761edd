import MainLoopJSON
import ScenarioReplay
import SystemNotifications

/// `mainloop replay [--check [--expect OUTPUT]] [--kinds FILE] [--partial] FILE...`: runs BEHAVIOUR.md §7 scenarios on the real
/// main loop (deterministic mode) and prints BEHAVIOUR.md §7 observation lines, or
/// compares them with each file's `expect`.
struct ReplayCommand {
    static let spec = CommandSpec(
        name: "replay",
        abstract: "Replay lifecycle/coalescing scenarios and print one JSON observation per line.",
        discussion: """
            Without --check, prints each scenario's observations (BEHAVIOUR.md §7) to stdout, one JSON \
            object per line. With --check, compares them with each file's "expect" and prints \
            one line per file and a final "N passed, N failed" line; the exit status is non-zero \
            if any file fails. A malformed file is reported with its step index and problem, \
            and the other files still run.
            """,
        options: [
            .flag("check", "Compare with each file's \"expect\" instead of printing observations."),
            .value("kinds", "file", "Declare the kinds in FILE (a JSON array of custom kind entries, as "
                   + "CoalescingRule.customKindJSON() writes them) before each scenario's own."),
            .value("expect", "file", "With --check and one file: compare with the observation lines in FILE "
                   + "(what `mainloop run --record` printed live) instead of the file's \"expect\"."),
            .flag("partial", "Replay a recording that was cut off (no end line): its whole steps."),
        ],
        arguments: "<file> ...",
        argumentsHelp: "Scenario files (JSON)."
    )

    let check: Bool
    let kindsFile: String?
    let expectFile: String?
    let partial: Bool
    let files: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        check = arguments.flag("check")
        kindsFile = arguments.string("kinds")
        expectFile = arguments.string("expect")
        partial = arguments.flag("partial")
        files = arguments.arguments
        if files.isEmpty { throw UsageError("missing scenario files") }
        if expectFile != nil, !check || files.count != 1 { throw UsageError("--expect needs --check and one file") }
    }

    func run() throws {
        var kinds: [CoalescingRule] = []
        if let kindsFile {
            do {
                kinds = try ScenarioFile.readKinds(kindsFile)
            } catch {
                Output.error("error: \(error)")
                throw ExitCode(1)
            }
        }
        check ? try runChecks(kinds) : try runReplays(kinds)
    }

    private func runReplays(_ kinds: [CoalescingRule]) throws {
        var failures = 0
        for file in files {
            do {
                // Streamed: each line is printed as it happens, so any
                // number of them takes bounded memory (BEHAVIOUR.md §7).
                let output = Output.Batched()
                defer { output.flush() }
                try ScenarioFile.stream(file, kinds: kinds, partial: partial) { output.line(ScenarioFile.line($0)) }
            } catch {
                failures += 1
                Output.error("error: \(error)")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    private func runChecks(_ kinds: [CoalescingRule]) throws {
        var passed = 0, failed = 0
        var expected: [JSONObject]?
        if let expectFile {
            do {
                expected = try ScenarioFile.readObservations(expectFile)
            } catch {
                Output.error("error: \(error)")
                throw ExitCode(1)
            }
        }
        for file in files {
            switch ScenarioFile.check(file, kinds: kinds, partial: partial, expected: expected) {
            case .passed(let name):
                passed += 1
                Output.line("PASS \(file) (\(name))")
            case .failed(let name, let difference):
                failed += 1
                Output.line("FAIL \(file) (\(name)): \(difference)")
            case .noExpectation(let name):
                failed += 1
                Output.line("FAIL \(file) (\(name)): no \"expect\" to compare with")
            case .error(let message):
                failed += 1
                Output.line("ERROR \(message)")
            }
        }
        Output.line("\(passed) passed, \(failed) failed")
        if failed > 0 { throw ExitCode(1) }
    }
}
