import AsyncHTTPClient
import FerryModel
import Foundation
import Logging

/// Where an attempt's bytes come from: the URL and its mirrors, each dropped (journaled) when it
/// fails or has another copy of the file.
extension TransferWorker {
    /// The attempt's first answer (2xx or 416): from the URL, else from each mirror in turn. A
    /// source that fails is left out of the rest of the attempt while another remains, and a
    /// mirror without the file (404, 410, 401, 403) or with another copy of it (when resuming:
    /// the whole file, another length or validator) is dropped for good; each is journaled.
    /// When all fail, the error is one that waiting can mend if any was, else the last.
    /// - Returns: the response, its URL after redirects, and the source it came from.
    func open(
        _ url: URL, mirrors: inout [URL], plan: ResumePlan, record: TransferRecord, settings: TransferSettings, http1: Bool = false
    ) async throws -> (HTTPClientResponse, URL, URL) {
        var mendable: (any Error)?
        let sources = [url] + mirrors
        for source in sources {
            let isLast = source == sources.last
            var differs: String?
            do {
                let (response, finalURL) = try await fetcher.get(
                    source, headers: plan.requestHeaders, extra: settings.headers, headTimeout: settings.headTimeout, options: settings.merged,
                    session: settings.sessionName, http1: http1, auth: authenticator(for: record, settings: settings)
                )
                let status = Int(response.status.code)
                guard (200...299).contains(status) || status == 416 else {
                    var failure = HTTPStatusFailure(
                        status: status, reason: response.status.reasonPhrase, url: finalURL,
                        retryAfter: response.headers.first(name: "Retry-After")
                    )
                    // nginx answers a missing or refused client certificate with a 400 page saying so.
                    if status == 400, finalURL.scheme?.lowercased() == "https",
                       let page = try? await response.body.collect(upTo: 16 << 10) {
                        failure.clientCertificate = HTTPStatusFailure.ClientCertificateTrouble(page: String(buffer: page), had: settings.merged.clientCertificate != nil)
                    }
                    throw failure
                }
                differs = source == url ? nil : Self.mirrorDiffers(response, plan: plan)
                guard let differs else { return (response, finalURL, source) }
                throw FerryError(.rangeMismatch, "The mirror \(source.absoluteString) has another copy of the file: \(differs).")
            } catch {
                let failure = AttemptFailure(error, url: source)
                if failure.retryable { mendable = mendable ?? error }
                // A mirror without the file, or with another copy of it, is of no use again.
                let forGood = source != url && (differs != nil || !failure.retryable)
                if forGood || !isLast {
                    await dropSource(record.transferId, source, reason: differs.map { "its copy differs: \($0)" } ?? Self.brief(error), forGood: forGood)
                }
                if isLast { throw mendable ?? error }
                mirrors.removeAll { $0 == source }
            }
        }
        throw mendable ?? FerryError(.internalError, "No source of the file was tried.")
    }

    /// The transfer's ``Authenticator``: its own URL's credentials, the `.netrc` and the store.
    func authenticator(for record: TransferRecord, settings: TransferSettings) -> Authenticator? {
        guard let url = URL(string: record.url) else { return nil }
        let journal = store.journal
        let lookup = CredentialLookup(url: url, options: settings.merged, store: { try await journal.storedCredentials() })
        return fetcher.authenticators.authenticator(for: record.transferId, lookup: lookup)
    }

    /// Why a mirror's answer to a resumed request shows another copy of the file, if it does.
    static func mirrorDiffers(_ response: HTTPClientResponse, plan: ResumePlan) -> String? {
        guard plan.offset > 0 else { return nil }
        let headers = response.headers
        let theirs = Validator.from(etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
        if response.status.code == 200 { return "it answered a range request with the whole file (validator \(theirs ?? "none"))" }
        if let theirs, theirs != plan.validator { return "its validator is \(theirs), not \(plan.validator ?? "none")" }
        if let total = headers.first(name: "Content-Range").flatMap(ContentRange.init)?.total, let known = plan.knownTotal, total != known {
            return "it has \(total) bytes, not \(known)"
        }
        return nil
    }

    /// A few words of why a source failed: "answered 404 Not Found", "the connection to b failed".
    static func brief(_ error: any Error) -> String {
        if let status = error as? HTTPStatusFailure { return "answered \(status.status) \(status.reason)" }
        return AttemptFailure(error).reason
    }

    /// Journals that `source` is no longer used (a `mirrorDropped` event), and for good in the
    /// transfer's mirrors. A journal that refuses only loses the note.
    func dropSource(_ id: Int64, _ source: URL, reason: String, forGood: Bool) async {
        logger.info("source dropped", metadata: ["transfer.id": "\(id)", "source": "\(source)", "reason": "\(reason)", "forGood": "\(forGood)"])
        do {
            try await store.record(.sourceDropped(url: source.absoluteString, reason: reason, forGood: forGood), of: id)
        } catch {
            logger.warning("could not journal a dropped source", metadata: ["error": "\(error)"])
        }
    }
}
