/// One subcommand's command line, parsed against its ``CommandSpec``.
///
/// The rules are getopt_long's for long options: `--name value` and
/// `--name=value` are the same; an option that takes a value takes the next
/// word whatever it looks like (so `--pace -5` is -5, refused later as
/// negative); `--` ends the options; every other word is an argument.
/// `-h` and `--help` ask for help (``helpRequested``). An option given
/// twice keeps its last value, unless it is repeatable (every value kept).
struct ParsedArguments {
    let spec: CommandSpec
    /// Every `--name value` given, in order. Plain arrays: a command line
    /// has a few options, and a dictionary's first use costs more at
    /// start-up (its generic metadata) than searching them.
    private var values: [(name: String, value: String)] = []
    private var flags: [String] = []
    /// The words that are not options, in order.
    private(set) var arguments: [String] = []
    /// `-h` or `--help` was given.
    private(set) var helpRequested = false

    init(_ words: ArraySlice<String>, spec: CommandSpec) throws(UsageError) {
        self.spec = spec
        var words = words
        while let word = words.popFirst() {
            if word == "--" {
                arguments += words
                break
            }
            if word == "-h" || word == "--help" {
                helpRequested = true
                continue
            }
            guard word.hasPrefix("--") else {
                // A negative number (`ctl batteryLevel -0.5`) is an argument.
                if word.count > 1 && word.hasPrefix("-") && Double(word) == nil {
                    throw UsageError("unknown option '\(word)'")
                }
                arguments.append(word)
                continue
            }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let attached = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = spec.option(named: name) else { throw UsageError("unknown option '--\(name)'") }
            guard option.value != nil else {
                if attached != nil { throw UsageError("--\(name) takes no value") }
                flags.append(name)
                continue
            }
            guard let value = attached ?? words.popFirst() else { throw UsageError("missing value for '--\(name)'") }
            values.append((name, value))
        }
        if spec.arguments == nil, let first = arguments.first { throw UsageError("unexpected argument '\(first)'") }
    }

    /// Whether the flag `--name` was given.
    func flag(_ name: String) -> Bool {
        precondition(spec.option(named: name)?.value == nil, "--\(name) is not a flag of \(spec.name)")
        return flags.contains(name)
    }

    /// Whether `--name` was given (rather than left at its default).
    func isGiven(_ name: String) -> Bool { !all(name).isEmpty }

    /// The value of `--name`: the last one given, else the spec's default
    /// (nil when it has none).
    func string(_ name: String) -> String? { all(name).last ?? spec.option(named: name)?.defaultValue }

    /// Every value of a repeatable `--name`, in order (empty when not given).
    func all(_ name: String) -> [String] {
        precondition(spec.option(named: name)?.value != nil, "--\(name) is not an option of \(spec.name)")
        return values.filter { $0.name == name }.map(\.value)
    }

    /// The value of `--name` (given, else the spec's default) as a whole number.
    func int(_ name: String) throws(UsageError) -> Int {
        let text = required(name)
        guard let value = Int(text) else { throw UsageError("--\(name) expects an integer, not '\(text)'") }
        return value
    }

    /// The value of `--name` (given, else the spec's default) as a finite number.
    func double(_ name: String) throws(UsageError) -> Double {
        let text = required(name)
        guard let value = Double(text), value.isFinite else { throw UsageError("--\(name) expects a number, not '\(text)'") }
        return value
    }

    /// The value of an option the spec gives a default.
    private func required(_ name: String) -> String {
        guard let text = string(name) else { preconditionFailure("--\(name) of \(spec.name) has no default") }
        return text
    }
}
