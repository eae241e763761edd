import ScenarioReplay

/// `mainloop replay [--check] FILE...`: runs BEHAVIOUR.md §7 scenarios on the real
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
        options: [.flag("check", "Compare with each file's \"expect\" instead of printing observations.")],
        arguments: "<file> ...",
        argumentsHelp: "Scenario files (JSON)."
    )

    let check: Bool
    let files: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        check = arguments.flag("check")
        files = arguments.arguments
        if files.isEmpty { throw UsageError("missing scenario files") }
    }

    func run() throws {
        check ? try runChecks() : try runReplays()
    }

    private func runReplays() throws {
        var failures = 0
        for file in files {
            do {
                // Streamed: each line is printed as it happens, so any
                // number of them takes bounded memory (BEHAVIOUR.md §7).
                let output = Output.Batched()
                defer { output.flush() }
                try ScenarioFile.stream(file) { output.line(ScenarioFile.line($0)) }
            } catch {
                failures += 1
                Output.error("error: \(error)")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    private func runChecks() throws {
        var passed = 0, failed = 0
        for file in files {
            switch ScenarioFile.check(file) {
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
