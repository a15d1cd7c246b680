import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// The Open Podcast API's subscriptions (its draft's settled endpoints, openpodcastapi.org:
/// `/v1/subscriptions`, `/v1/subscriptions/{guid}`, `/v1/deletions/{id}`) on the sync listener,
/// over the same library as the gpodder.net and Nextcloud paths. JSON only; logins as those
/// paths take them (HTTP Basic with the account's password or an app password), since the
/// draft's authentication is not written yet. Errors are the draft's `{"code", "message"}`.
struct OpenPodcastRoutes {
    let sync: SyncLibrary
    let auth: SyncAuthenticator
    let subscribeInBackground: @Sendable () -> Void

    /// The draft's default page, and the most Ferry gives at once.
    static let perPage = 50
    static let maxPerPage = 500

    func register(on router: Router<FerryRequestContext>) {
        let api = router.group("v1").add(middleware: SyncSessionMiddleware(auth: auth))
        api.get("subscriptions") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                let since = try Self.since(request)
                let all = try await sync.openSubscriptions(user: user, since: since)
                return try jsonResponse(try Self.page(all, request: request, since: request.uri.queryParameters.get("since")))
            }
        }
        api.post("subscriptions") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                let body = try await request.decodeJSON(FeedArray.self, context: context)
                guard body.subscriptions.count <= 1000 else {
                    throw FerryError.invalidRequest("At most 1,000 subscriptions at once; send the rest in another request.")
                }
                let (success, failure) = try await sync.addOpenSubscriptions(user: user, feeds: body.subscriptions.map { ($0.feedURL, $0.guid) })
                if !success.isEmpty { subscribeInBackground() }
                return try jsonResponse(NewSubscriptions(success: success, failure: failure.map { Failure(feedURL: $0.url, message: $0.message) }))
            }
        }
        api.get("subscriptions/:guid") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                return try jsonResponse(try await existing(user, context))
            }
        }
        api.patch("subscriptions/:guid") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                let subscription = try await existing(user, context)
                let body = try await request.decodeJSON(SubscriptionUpdate.self, context: context)
                if let guid = body.newGuid, !subscription.isNamed(guid) {
                    throw FerryError.invalidRequest("Ferry reads a podcast's GUID from its feed (podcast:guid); new_guid cannot change it.")
                }
                let patch = try await sync.patchOpenSubscription(user: user, subscription, newFeedURL: body.newFeedURL, isSubscribed: body.isSubscribed)
                if patch.newFeedURL != nil || patch.isSubscribed == true { subscribeInBackground() }
                return try jsonResponse(patch)
            }
        }
        api.delete("subscriptions/:guid") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                let id = try await sync.deleteOpenSubscription(user: user, try await named(user, context))
                return try jsonResponse(Received(deletionId: id, message: "Deletion request was received and will be processed"), status: .accepted)
            }
        }
        api.get("deletions/:id") { request, context in
            try await answer {
                let user = try await auth.authenticate(request, context: context)
                let text = try context.parameters.require("id")
                guard let id = Int64(text), id > 0, let deletion = try await sync.openDeletion(user: user, id: id) else {
                    throw FerryError(.notFound, "There is no deletion \(text.prefix(40)).")
                }
                return try jsonResponse(Deletion(deletionId: deletion.seq, status: "SUCCESS", message: "Subscription deleted successfully"))
            }
        }
    }

    /// The subscription the path's GUID names, deleted or not; 404 for none.
    private func named(_ user: String, _ context: FerryRequestContext) async throws -> OpenPodcastSubscription {
        let guid = try context.parameters.require("guid")
        guard let subscription = try await sync.openSubscription(user: user, guid: guid) else {
            throw FerryError(.notFound, "There is no subscription \(guid.prefix(80)).")
        }
        return subscription
    }

    /// The subscription the path's GUID names; 404 for none, 410 (the draft's Gone) for a deleted one.
    private func existing(_ user: String, _ context: FerryRequestContext) async throws -> OpenPodcastSubscription {
        let subscription = try await named(user, context)
        guard subscription.deleted == nil else { throw Gone() }
        return subscription
    }

    private struct Gone: Error {}

    /// The draft's error body for Ferry's errors (the middleware's shape is Ferry's own API's).
    private func answer(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as FerryError {
            let status = ErrorMiddleware.status(for: error.code)
            return try jsonResponse(Problem(code: Int(status.code), message: error.message), status: status)
        } catch is Gone {
            return try jsonResponse(Problem(code: 410, message: "Subscription has been deleted"), status: .gone)
        }
    }

    /// `since` in ISO 8601 (`2022-04-23T18:25:43.511Z`, or with an offset), to whole seconds
    /// (the log's): changes at that second are sent again rather than missed.
    static func since(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters.get("since"), !text.isEmpty else { return nil }
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard let date = (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: withFraction)) else {
            throw FerryError.invalidRequest("since is a date and time in ISO 8601, such as 2022-04-23T18:25:43.511Z.")
        }
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }

    static func page(_ all: [OpenPodcastSubscription], request: Request, since: String?) throws -> Subscriptions {
        let perPage = try request.integerQuery("per_page", in: 1...Self.maxPerPage) ?? Self.perPage
        let page = try request.integerQuery("page", in: 1...Int(Int32.max)) ?? 1
        let start = min(all.count, (page - 1) * perPage)  // at most 2³¹ × 500: no overflow
        let end = min(all.count, start + perPage)
        func link(_ page: Int) -> String {
            var query = [("page", String(page)), ("per_page", String(perPage))]
            if let since { query.insert(("since", since), at: 0) }
            var components = URLComponents()
            components.path = "/v1/subscriptions"
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            // `+` in an offset must not read as a space.
            return components.url?.absoluteString.replacingOccurrences(of: "+", with: "%2B") ?? "/v1/subscriptions"
        }
        return Subscriptions(
            total: all.count, page: page, perPage: perPage, next: end < all.count ? link(page + 1) : nil,
            previous: page > 1 && start > 0 ? link(page - 1) : nil, subscriptions: Array(all[start..<end])
        )
    }

    struct Subscriptions: Encodable {
        var total: Int
        var page: Int
        var perPage: Int
        var next: String?
        var previous: String?
        var subscriptions: [OpenPodcastSubscription]

        enum CodingKeys: String, CodingKey {
            case total, page, perPage = "per_page", next, previous, subscriptions
        }
    }

    private struct FeedArray: Decodable {
        var subscriptions: [Feed]

        struct Feed: Decodable {
            var feedURL: String
            var guid: String?

            enum CodingKeys: String, CodingKey {
                case feedURL = "feed_url", guid
            }
        }
    }

    private struct SubscriptionUpdate: Decodable {
        var newFeedURL: String?
        var newGuid: String?
        var isSubscribed: Bool?

        enum CodingKeys: String, CodingKey {
            case newFeedURL = "new_feed_url", newGuid = "new_guid", isSubscribed = "is_subscribed"
        }
    }

    private struct NewSubscriptions: Encodable {
        var success: [OpenPodcastSubscription]
        var failure: [Failure]
    }

    private struct Failure: Encodable {
        var feedURL: String
        var message: String

        enum CodingKeys: String, CodingKey {
            case feedURL = "feed_url", message
        }
    }

    private struct Received: Encodable {
        var deletionId: Int64
        var message: String

        enum CodingKeys: String, CodingKey {
            case deletionId = "deletion_id", message
        }
    }

    private struct Deletion: Encodable {
        var deletionId: Int64
        var status: String
        var message: String

        enum CodingKeys: String, CodingKey {
            case deletionId = "deletion_id", status, message
        }
    }

    private struct Problem: Encodable {
        var code: Int
        var message: String
    }
}
