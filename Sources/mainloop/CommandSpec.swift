/// What one subcommand accepts: its options and its arguments, and the help
/// text made from them. The tool parses its command line with this
/// (``ParsedArguments``) instead of a reflection-based parser, which cost
/// more than half of `mainloop run`'s start-up.
struct CommandSpec {
    /// One `--name` option: a flag, or an option that takes a value.
    struct Option {
        /// The long name without its dashes (`socket` for `--socket`).
        let name: String
        /// What the value is called in help (`path`), nil for a flag.
        let value: String?
        /// One line (or a few) of help.
        let help: String
        /// The value used when the option is not given, written once here
        /// for both the parse (``ParsedArguments``) and the help; nil: none.
        let defaultValue: String?
        /// Whether the option may be given more than once (each value kept, in order).
        let repeatable: Bool

        /// An option that takes a value.
        static func value(_ name: String, _ value: String, _ help: String, default defaultValue: String? = nil,
                          repeatable: Bool = false) -> Option {
            Option(name: name, value: value, help: help, defaultValue: defaultValue, repeatable: repeatable)
        }

        /// A flag: present or not.
        static func flag(_ name: String, _ help: String) -> Option {
            Option(name: name, value: nil, help: help, defaultValue: nil, repeatable: false)
        }
    }

    /// The subcommand's name (`run`).
    let name: String
    /// One line: what it does.
    let abstract: String
    /// More, shown after the usage line (may be empty).
    var discussion = ""
    /// Its options, in the order help lists them.
    var options: [Option] = []
    /// Its arguments as the usage line shows them (`<file> ...`), nil for none.
    var arguments: String? = nil
    /// What its arguments are, for help.
    var argumentsHelp = ""

    /// The option called `name`, if the subcommand has one.
    func option(named name: String) -> Option? { options.first { $0.name == name } }

    /// The help text: usage line, discussion, arguments and options.
    var help: String {
        var usage = "USAGE: mainloop \(name)"
        if !options.isEmpty { usage += " [<options>]" }
        if let arguments { usage += " \(arguments)" }
        var text = "OVERVIEW: \(abstract)\n\n\(usage)\n"
        if !discussion.isEmpty {
            // Lines that start with spaces are examples, kept as they are.
            text += "\n" + discussion.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix(" ") ? line + "\n" : Self.wrapped(String(line), indent: "")
            }.joined()
        }
        if let arguments {
            text += "\nARGUMENTS:\n  \(arguments)\n" + Self.indented(argumentsHelp)
        }
        text += "\nOPTIONS:\n"
        for option in options {
            text += "  --\(option.name)" + (option.value.map { " <\($0)>" } ?? "") + "\n"
            var help = option.help
            if let defaultValue = option.defaultValue { help += " (default: \(defaultValue))" }
            if option.repeatable { help += " (repeatable)" }
            text += Self.indented(help)
        }
        text += "  -h, --help\n" + Self.indented("Show this help.")
        return text
    }

    /// `text` wrapped at 80 columns, each line indented by 8 spaces.
    private static func indented(_ text: String) -> String { wrapped(text, indent: "        ") }

    /// `text` wrapped at 80 columns, each line after `indent`.
    private static func wrapped(_ text: String, indent: String) -> String {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && indent.count + line.count + 1 + word.count > 80 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { indent + $0 + "\n" }.joined()
    }
}
