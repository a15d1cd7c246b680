import FerryModel

/// One challenge of a `WWW-Authenticate` header (RFC 7235 section 4.1): a scheme and either a
/// token68 or parameters. One header may hold several challenges separated by commas, and
/// commas also separate a challenge's parameters, so the parser decides by what follows each
/// comma: `name=` continues the parameters, a bare token starts the next challenge.
package struct AuthChallenge: Sendable, Hashable {
    /// The scheme, lower-cased: `basic`, `digest`, `bearer`.
    package var scheme: String
    /// The token68 form (`Negotiate abc==`), when the challenge has no parameters.
    package var token68: String?
    /// Parameters by lower-cased name, quoted strings unquoted (`realm`, `nonce`, `qop`).
    package var parameters: [String: String]

    package init(scheme: String, token68: String? = nil, parameters: [String: String] = [:]) {
        self.scheme = scheme.lowercased()
        self.token68 = token68
        self.parameters = parameters
    }

    package subscript(_ name: String) -> String? { parameters[name.lowercased()] }

    /// Every challenge of every `WWW-Authenticate` header, in order.
    /// - Throws: ``FerryError`` `authentication_failed` naming what in the header is malformed
    ///   (an unterminated quoted string, a parameter without a value, a stray character).
    package static func parse(_ headers: [String]) throws(FerryError) -> [AuthChallenge] {
        var all: [AuthChallenge] = []
        for header in headers {
            var parser = Parser(Array(header.utf8))
            do {
                all += try parser.challenges()
            } catch {
                throw FerryError(
                    .authenticationFailed, "The server's WWW-Authenticate header '\(header.prefix(120))' is malformed: \(error.reason)."
                )
            }
        }
        return all
    }

    struct Malformed: Error {
        var reason: String
    }

    /// A cursor over one header's bytes.
    struct Parser {
        let bytes: [UInt8]
        var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        static let tokenBytes: Set<UInt8> = Set(Array("!#$%&'*+-.^_`|~".utf8) + Array(48...57) + Array(65...90) + Array(97...122))
        static let token68Bytes: Set<UInt8> = Set(Array("-._~+/".utf8) + Array(48...57) + Array(65...90) + Array(97...122))

        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 { at += 1 }
        }

        /// Commas and spaces between list elements (RFC 7230 allows empty elements).
        mutating func skipSeparators() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { at += 1 }
        }

        mutating func token() -> String? {
            let start = at
            while let byte = peek, Self.tokenBytes.contains(byte) { at += 1 }
            return at > start ? String(decoding: bytes[start..<at], as: UTF8.self) : nil
        }

        mutating func quoted() throws(Malformed) -> String {
            at += 1  // the opening quote
            var value: [UInt8] = []
            while let byte = peek {
                at += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { throw Malformed(reason: "a quoted string ends in a backslash") }
                    value.append(escaped)
                    at += 1
                default: value.append(byte)
                }
            }
            throw Malformed(reason: "a quoted string is not closed")
        }

        mutating func challenges() throws(Malformed) -> [AuthChallenge] {
            var result: [AuthChallenge] = []
            skipSeparators()
            while peek != nil {
                guard let scheme = token() else {
                    throw Malformed(reason: "'\(Character(Unicode.Scalar(peek!)))' where an authentication scheme should start")
                }
                var challenge = AuthChallenge(scheme: scheme)
                skipSpace()
                if let token68 = token68() {
                    challenge.token68 = token68
                } else {
                    try parameters(into: &challenge)
                }
                result.append(challenge)
                skipSeparators()
            }
            return result
        }

        /// A token68 (`abc+/==`) followed by the end or a comma; else nothing is consumed.
        mutating func token68() -> String? {
            let start = at
            while let byte = peek, Self.token68Bytes.contains(byte) { at += 1 }
            guard at > start else { return nil }
            while peek == UInt8(ascii: "=") { at += 1 }
            let end = at
            skipSpace()
            // `name=value` is a parameter, not a token68 with padding.
            if peek == nil || peek == UInt8(ascii: ",") { return String(decoding: bytes[start..<end], as: UTF8.self) }
            at = start
            return nil
        }

        /// `name = value` pairs separated by commas, until one is followed by a bare token (the
        /// next challenge) or the end.
        mutating func parameters(into challenge: inout AuthChallenge) throws(Malformed) {
            while true {
                let start = at
                guard let name = token() else {
                    if peek == nil || peek == UInt8(ascii: ",") { return }
                    throw Malformed(reason: "'\(Character(Unicode.Scalar(peek!)))' where a parameter name should start")
                }
                skipSpace()
                guard peek == UInt8(ascii: "=") else {
                    // A bare token: the next challenge's scheme.
                    at = start
                    return
                }
                at += 1
                skipSpace()
                let value: String
                if peek == UInt8(ascii: "\"") {
                    value = try quoted()
                } else if let token = token() {
                    value = token
                } else {
                    throw Malformed(reason: "the parameter \(name) has no value")
                }
                let key = name.lowercased()
                guard challenge.parameters[key] == nil else { throw Malformed(reason: "the parameter \(name) is given twice") }
                challenge.parameters[key] = value
                skipSpace()
                guard peek != nil else { return }
                guard peek == UInt8(ascii: ",") else {
                    throw Malformed(reason: "'\(Character(Unicode.Scalar(peek!)))' after the parameter \(name)")
                }
                skipSeparators()
                if peek == nil { return }
            }
        }
    }
}
