@testable import FerryServer
import FerryKit
import FerryTestSupport
import Foundation
import Testing
import X509

/// Ferry's own CA: made once and kept, a server certificate made again when the names or
/// addresses change, and a CA that cannot vouch for a site on the internet.
@Suite struct LocalAuthorityTests {
    @Test func theCAIsKeptAndTheServerCertificateFollowsTheNames() async throws {
        try await withTemporaryDirectory { state in
            let authority = LocalAuthority(state: state)
            #expect(try authority.prepare(names: ["nas", "nas.local"], addresses: ["192.168.1.5"]), "a CA made")
            let ca = try String(contentsOfFile: authority.caCertificatePath, encoding: .utf8)
            let first = try String(contentsOfFile: authority.certificatePath, encoding: .utf8)
            #expect(try !authority.prepare(names: ["nas.local", "nas"], addresses: ["192.168.1.5"]))
            #expect(try String(contentsOfFile: authority.certificatePath, encoding: .utf8) == first, "nothing changed, nothing made")

            // A new address (DHCP gave another): a new server certificate, the same CA.
            #expect(try !authority.prepare(names: ["nas", "nas.local"], addresses: ["192.168.1.9"]))
            let second = try String(contentsOfFile: authority.certificatePath, encoding: .utf8)
            let caAgain = try String(contentsOfFile: authority.caCertificatePath, encoding: .utf8)
            #expect(second != first && caAgain == ca)
            #expect(try Self.openssl(["verify", "-CAfile", authority.caCertificatePath, authority.certificatePath]).contains("OK"))
            let text = try Self.openssl(["x509", "-in", authority.certificatePath, "-noout", "-ext", "subjectAltName"])
            #expect(text.contains("DNS:nas") && text.contains("DNS:nas.local") && text.contains("IP Address:192.168.1.9"), "\(text)")

            // A name the CA may not sign (a public one given later): a new CA, to trust again.
            #expect(try authority.prepare(names: ["ferry.example.org"], addresses: []))
            let newCA = try String(contentsOfFile: authority.caCertificatePath, encoding: .utf8)
            #expect(newCA != ca)
            for (file, mode) in [(authority.keyPath, 0o600), ("\(state.path)/tls/ca-key.pem", 0o600), (authority.certificatePath, 0o644)] {
                #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == mode, "\(file)")
            }
        }
    }

    /// Even with its key, the CA cannot make a certificate a verifier accepts for a name on the
    /// internet (openssl checks the name constraints).
    @Test func theCAVouchesForLocalNamesAlone() async throws {
        try await withTemporaryDirectory { state in
            let (ca, caKey) = try LocalAuthority.makeCA(names: ["nas"], now: Date())
            let caFile = state.appendingPathComponent("ca.pem").path
            try ca.serializeAsPEM().pemString.write(toFile: caFile, atomically: true, encoding: .utf8)
            for (names, allowed) in [(["nas.local"], true), (["nas"], true), (["printer.home.arpa"], true), (["www.example.com"], false), (["bank.com"], false)] {
                let leaf = try LocalAuthority.makeServerCertificate(key: .init(), names: names, addresses: [], ca: ca, caKey: caKey, now: Date())
                let leafFile = state.appendingPathComponent("leaf.pem").path
                try leaf.serializeAsPEM().pemString.write(toFile: leafFile, atomically: true, encoding: .utf8)
                let verdict = try Self.openssl(["verify", "-CAfile", caFile, leafFile])
                #expect(verdict.contains(": OK") == allowed, "\(names): \(verdict)")
                if !allowed { #expect(verdict.contains("permitted subtree violation"), "\(verdict)") }
            }
        }
    }

    static func openssl(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.capture("/usr/bin/openssl", arguments: arguments)
        return result.output + result.error
    }
}
