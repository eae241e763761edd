import EngineWire
import MainLoopJSON

/// libFuzzer's entry point: the bytes are one control-socket line. Every
/// input must come back as a decoded request or an error, never a crash, a
/// hang or a leak (the address sanitizer checks memory). The line is parsed
/// in place, as a connection parses it in its input: the parser reads an
/// unsafe buffer with no bounds checks of its own in a release build, and
/// libFuzzer's copy of the input is exactly its size, so a read past the
/// end is the sanitizer's to report. A line that is UTF-8 must parse to the
/// same value from its `String`. The decoded request is also printed back
/// to JSON and parsed again: a value the parser accepted must survive the
/// round trip. A line the control socket reads from its bytes (the plain
/// event form, `SystemEventLine`) must be one the parser reads as exactly
/// `{"system": {kind: value}}`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let plain = SystemEventLine(bytes).map { (name: String(decoding: $0.kindName, as: UTF8.self), value: $0.value) }
    let value: JSONValue
    do {
        value = try JSONValue.parse(utf8: bytes)
    } catch {
        if plain != nil { fatalError("SystemEventLine read a line the parser rejects: \(error)") }
        return 0  // malformed JSON: an error reply
    }
    if let plain, value != ["system": .object([plain.name: plain.value])] {
        fatalError("SystemEventLine read \(plain) from a line the parser reads as \(value.jsonText)")
    }
    if let line = String(validating: bytes, as: UTF8.self) {
        guard (try? JSONValue.parse(line)) == value else { fatalError("the String of \(line) parses otherwise") }
    }
    let reprinted = value.jsonText
    do {
        guard try JSONValue.parse(reprinted) == value else { fatalError("round trip changed \(reprinted)") }
    } catch {
        fatalError("the printer wrote JSON the parser rejects: \(reprinted): \(error)")
    }
    guard let object = value.objectValue else { return 0 }
    for context in [RequestContext.controlSocket, .scenarioStep] {
        do {
            _ = try RequestDecoder.decode(object, context: context)
        } catch {
            // A refused request becomes an error reply: the expected outcome.
        }
    }
    return 0
}

/// libFuzzer's driver (the library's own `main` is not linked: SwiftPM
/// names an executable's entry point `<target>_main`, so this is it).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("RequestDecoderFuzzer_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
