// Generated from openapi.json by scripts/openapi-types.mjs (npm run openapi). Do not edit.

export type paths = {
    "/api/v1/search/twitter/user": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Creator search (microblog platform)
         * @description Filtered, paged search over creators. Every body field is optional; `sort_by` defaults to `relevance` with a non-empty `query`, else `follower_count`; every order is descending with `user_id` as the tie-break.
         *
         *     Costs 100 quota units per successful request; failures cost nothing.
         */
        post: operations["searchCreators"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/search/youtube/video": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Video search (video platform)
         * @description Filtered, paged search over videos; audience filters apply to the video's channel. Ordered by relevance with a non-empty `query`, else newest first.
         *
         *     Costs 100 quota units per successful request; failures cost nothing.
         */
        post: operations["searchVideos"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/twitch/search/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Live-stream search (live-stream platform)
         * @description Current live broadcasts from the latest collected snapshot, by viewer count descending. Page forward with `after` = a previous `data.offset`, back with `before`.
         *
         *     Costs 1 quota unit per successful request; failures cost nothing.
         */
        post: operations["searchLiveStreams"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/instagram/realtime/user/medias": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A creator's latest posts, fetched live (photo platform)
         * @description Fetches the newest posts of an account from the platform at request time. 404: the platform has no such public account; 500 `upstream unavailable`: the platform failed or timed out (retry with backoff).
         *
         *     Costs 100 quota units per successful request; failures cost nothing.
         */
        get: operations["realtimeMedias"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Connectivity and key check
         * @description Checks the key; answers `pong` with the server time.
         *
         *     Free: costs no quota units.
         */
        get: operations["ping"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
};
export type webhooks = Record<string, never>;
export type components = {
    schemas: {
        SearchCreatorsResponse: {
            /** @constant */
            success: true;
            /** @constant */
            code: 200;
            /** @constant */
            message: "success";
            data: {
                items: components["schemas"]["Creator"][];
                /** @description Exact number of matches */
                total: number;
                /** @description The page number, from 1 */
                page: number;
                page_size: number;
                /** @description ceil(total / page_size) */
                total_pages: number;
            };
        };
        SearchVideosResponse: {
            /** @constant */
            success: true;
            /** @constant */
            code: 200;
            /** @constant */
            message: "success";
            data: {
                items: components["schemas"]["Video"][];
                /** @description Exact number of matches */
                total: number;
                /** @description The page number, from 1 */
                page: number;
                page_size: number;
                /** @description ceil(total / page_size) */
                total_pages: number;
            };
        };
        SearchLiveStreamsResponse: {
            /** @constant */
            success: true;
            /** @constant */
            code: 200;
            /** @constant */
            message: "success";
            data: {
                /** @description Whether a next page exists (with `before`: whether streams exist further back) */
                more: boolean;
                /** @description Cursor to pass as `after` (with `before`: as `before`); "" when `more` is false */
                offset: string;
                data: components["schemas"]["LiveStream"][];
            };
        };
        RealtimeMediasResponse: {
            /** @constant */
            success: true;
            /** @constant */
            code: 200;
            /** @constant */
            message: "success";
            /** @description One page of an account's most recent posts, newest first */
            data: {
                /** @description Whether older posts exist */
                more: boolean;
                /** @description Pass as offset for the next page; "" when more is false */
                offset: string;
                medias: components["schemas"]["Media"][];
            };
        };
        PingResponse: {
            /** @constant */
            success: true;
            /** @constant */
            code: 200;
            /** @constant */
            message: "pong";
            data: {
                /**
                 * Format: date-time
                 * @description The server time
                 */
                time: string;
            };
        };
        LastPost: {
            post_id: string;
            description: string;
            /**
             * Format: date-time
             * @description An instant, ISO 8601 in UTC with milliseconds (2026-05-01T12:34:56.000Z)
             */
            create_at: string;
            cover_url: string;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            like_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            comment_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            retweet_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            view_count: number;
        };
        /** @description A creator account on the microblog platform, with summary metrics */
        Creator: {
            user_id: string;
            username: string;
            full_name: string;
            avatar: string;
            country: string;
            /**
             * @description Gender of a creator or channel
             * @enum {string}
             */
            gender: "female" | "male" | "unknown";
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            follower_count: number;
            is_verified: boolean;
            /** @description Percent */
            avg_engagement_rate: string;
            /** @description Percent */
            avg_video_engagement_rate: string;
            /** @description A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages */
            avg_comment_count: string;
            /** @description A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages */
            avg_like_count: string;
            /** @description A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages */
            avg_retweet_count: string;
            /** @description A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages */
            avg_view_count: string;
            /** @description Percent */
            retweet_ratio: string;
            /** @description Percent */
            reply_ratio: string;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            post_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            video_count: number;
            last_publish_at: string | null;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            recent_month_publish_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            recent_week_publish_count: number;
            last_post: components["schemas"]["LastPost"] | null;
            /** @description Estimated USD price of one sponsored post */
            evaluation_min: string;
            /** @description Estimated USD price of one sponsored post */
            evaluation_max: string;
            /**
             * Format: date-time
             * @description When the record was last collected or imported
             */
            last_update_at: string;
        };
        /** @description A channel on the video platform, with summary metrics */
        Channel: {
            channel_id: string;
            title: string;
            avatar: string;
            country: string;
            /**
             * @description Gender of a creator or channel
             * @enum {string}
             */
            gender: "female" | "male" | "unknown";
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            follower_count: number;
            /** @description Percent */
            avg_engagement_rate: string;
            /** @description A decimal metric as a string with two decimals ("3.25"); rates and ratios are percentages */
            avg_play_count: string;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            video_count: number;
            /** @description Estimated USD price of one sponsored video */
            evaluation_min: string;
            /** @description Estimated USD price of one sponsored video */
            evaluation_max: string;
        };
        /** @description A video on the video platform, with its channel and engagement counters */
        Video: {
            video_id: string;
            title: string;
            description: string;
            cover_url: string;
            /**
             * Format: date-time
             * @description An instant, ISO 8601 in UTC with milliseconds (2026-05-01T12:34:56.000Z)
             */
            create_at: string;
            /** @description ISO 8601 duration (PT4M13S) */
            duration: string;
            video_url: string;
            channel_title: string;
            channel_id: string;
            channel_avatar: string;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            channel_follower_count: number;
            /**
             * @description VIDEO (1 in REST) or SHORT (2 in REST)
             * @enum {string}
             */
            video_type: "short" | "video";
            category_id: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            like_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            comment_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            play_count: number;
            /** @description Percent */
            engagement_rate: string;
            channel: components["schemas"]["Channel"];
            /**
             * Format: date-time
             * @description When the record was last collected or imported
             */
            last_update_at: string;
        };
        /** @description A live broadcast on the live-stream platform, from the latest collected snapshot */
        LiveStream: {
            id: string;
            user_id: string;
            user_login: string;
            user_name: string;
            game_id: string;
            game_name: string;
            /** @description "live", or "" when the platform withholds it */
            type: string;
            title: string;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            viewer_count: number;
            /**
             * Format: date-time
             * @description An instant, ISO 8601 in UTC with milliseconds (2026-05-01T12:34:56.000Z)
             */
            started_at: string;
            language: string;
            thumbnail_url: string;
            tags: string[];
            is_mature: boolean;
            /**
             * Format: date-time
             * @description When the snapshot holding this stream was collected or imported
             */
            last_update_at: string;
        };
        /** @description A post on the photo platform, as fetched at request time */
        Media: {
            author_user_id: string;
            author_username: string;
            /** @description The author's full name */
            author_nickname: string;
            /** @description The platform's pk, as a string (it passes 2^53) */
            media_id: string;
            /** @description The platform's shortcode */
            media_code: string;
            /**
             * Format: date-time
             * @description An instant, ISO 8601 in UTC with milliseconds (2026-05-01T12:34:56.000Z)
             */
            create_at: string;
            /** @description First image candidate of the post (of its first child for a carousel) */
            cover_url: string;
            /** @description Main URL of each carousel child in order; a single post: its own */
            resources: string[];
            /** @description Caption text */
            description: string;
            accessibility_caption: string;
            /** @description Largest video version for a video, else largest image */
            media_url: string;
            /** @description The platform's own values: 1 image, 2 video, 8 carousel */
            media_type: number;
            /** @description Whole seconds; 0 for images */
            duration: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            like_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            comment_count: number;
            /** @description A whole count, exact up to 2^53 - 1 (beyond the 32-bit Int); serialised as a JSON number */
            play_count: number;
        };
        /** @description The error envelope of every REST answer that is not a success */
        ErrorEnvelope: {
            /** @constant */
            success: false;
            /** @description The HTTP status */
            code: number;
            /** @description A short explanation; `Bad Request` for a 400 */
            message: string;
            /** @description On a 400: every bad field */
            errors?: components["schemas"]["FieldError"][];
        };
        FieldError: {
            /** @description The REST name of the field (`follower_count_min`), `body` or `Content-Type` */
            field: string;
            message: string;
        };
    };
    responses: {
        /** @description The body or a parameter cannot be accepted (malformed JSON, wrong Content-Type, a wrong type or format, an unknown field, a value out of range). `errors` names every bad field. Fix the request; do not retry it as is. */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 400;
                };
            };
        };
        /** @description No valid key: the Authorization header is missing, carries a `Bearer` prefix or whitespace, or the key is unknown, disabled, rotated out or deleted. */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 401;
                };
            };
        };
        /** @description The key is valid but its plan does not include the endpoint, its subscription has ended, or its quota is used up. */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 403;
                };
            };
        };
        /** @description The platform has no such public account. */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 404;
                };
            };
        };
        /** @description The plan's rate or concurrent-request limit is exceeded. Wait `Retry-After` seconds, then retry. */
        TooManyRequests: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 429;
                };
            };
        };
        /** @description An upstream platform failed or timed out (`upstream unavailable`), or an unexpected error. Retryable with backoff. */
        InternalServerError: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 500;
                };
            };
        };
        /** @description The database is unreachable or the server is shutting down. Retry after `Retry-After` seconds. */
        ServiceUnavailable: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    /** @constant */
                    code?: 503;
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The request's id: the caller's own `X-Request-Id` when it is 1 to 64 of `A-Za-z0-9._:-`, else a new one. Quote it when reporting a problem. */
        "X-Request-Id": string;
        /** @description Quota units left on the account, on every answer to an identified key. */
        "X-Quota-Remaining": number;
        /** @description Quota units this request was charged: the operation's cost on success, 0 otherwise; on every answer to an identified key. */
        "X-Quota-Cost": number;
        /** @description Whole seconds to wait before retrying. */
        "Retry-After": number;
    };
    pathItems: never;
};
export type $defs = Record<string, never>;
export interface operations {
    searchCreators: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description Case-insensitive substring of username or full name */
                    query?: string | null;
                    /** @description Level-2 and level-3 category ids, combined as a union; a level-2 id covers its children */
                    category_ids?: number[] | null;
                    /** @description ISO 3166-1 alpha-2 country codes */
                    locations?: string[] | null;
                    follower_count_min?: number | null;
                    follower_count_max?: number | null;
                    /** @description Percent */
                    avg_engagement_rate_min?: number | null;
                    /** @description Percent */
                    avg_engagement_rate_max?: number | null;
                    avg_comment_count_min?: number | null;
                    avg_comment_count_max?: number | null;
                    avg_like_count_min?: number | null;
                    avg_like_count_max?: number | null;
                    /** @description Bounds the average view count */
                    avg_play_count_min?: number | null;
                    /** @description Bounds the average view count */
                    avg_play_count_max?: number | null;
                    gender?: (0 | 1 | 2) | null;
                    recent_month_publish_count_min?: number | null;
                    recent_month_publish_count_max?: number | null;
                    /** @description Last publish time from (ISO 8601 date or date-time) */
                    create_at_start?: string | null;
                    /** @description Last publish time to, inclusive (ISO 8601 date or date-time) */
                    create_at_end?: string | null;
                    has_email?: (0 | 1) | null;
                    /** @description ISO 639-1 language codes */
                    languages?: string[] | null;
                    /** @description Average likes + comments + reposts per post */
                    avg_engagement_count_min?: number | null;
                    /** @description Average likes + comments + reposts per post */
                    avg_engagement_count_max?: number | null;
                    /** @description Percent */
                    avg_video_engagement_rate_min?: number | null;
                    /** @description Percent */
                    avg_video_engagement_rate_max?: number | null;
                    verified?: (0 | 1) | null;
                    /** @description Maximum repost share, percent */
                    retweet_ratio_max?: number | null;
                    /** @description Page number, from 1 */
                    page?: number | null;
                    /** @description Items per page, 1 to 100 (default 20) */
                    page_size?: number | null;
                    sort_by?: ("relevance" | "follower_count" | "engagement_rate") | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                    "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchCreatorsResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchVideos: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description Case-insensitive substring of title or description */
                    query?: string | null;
                    /** @description The video's category ids (the contract's spelling) */
                    categorys?: number[] | null;
                    /** @description The channel's country, ISO 3166-1 alpha-2 */
                    locations?: string[] | null;
                    follower_count_min?: number | null;
                    follower_count_max?: number | null;
                    /** @description Percent */
                    avg_engagement_rate_min?: number | null;
                    /** @description Percent */
                    avg_engagement_rate_max?: number | null;
                    avg_comment_count_min?: number | null;
                    avg_comment_count_max?: number | null;
                    avg_like_count_min?: number | null;
                    avg_like_count_max?: number | null;
                    avg_play_count_min?: number | null;
                    avg_play_count_max?: number | null;
                    gender?: (0 | 1 | 2) | null;
                    recent_month_publish_count_min?: number | null;
                    recent_month_publish_count_max?: number | null;
                    /** @description Video publish time from (ISO 8601 date or date-time) */
                    create_at_start?: string | null;
                    /** @description Video publish time to, inclusive (ISO 8601 date or date-time) */
                    create_at_end?: string | null;
                    video_type?: (1 | 2) | null;
                    /** @description Page number, from 1 */
                    page?: number | null;
                    /** @description Items per page, 1 to 100 (default 20) */
                    page_size?: number | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                    "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchVideosResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchLiveStreams: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description The streamer's user id */
                    user_id?: string | null;
                    /** @description The streamer's login, matched case-insensitively */
                    user_login?: string | null;
                    /** @description Game (category) id */
                    game_id?: string | null;
                    type?: ("all" | "live") | null;
                    /** @description Broadcast language, ISO 639-1 (case-insensitive) or "other" */
                    language?: string | null;
                    /** @description Page size, 1 to 100 (default 20) */
                    first?: number | null;
                    /** @description A previous data.offset: the next page */
                    after?: string | null;
                    /** @description A cursor: the page just before it, in the same order */
                    before?: string | null;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                    "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchLiveStreamsResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    realtimeMedias: {
        parameters: {
            query: {
                /** @description The creator's numeric account id on the platform */
                user_id: string;
                /** @description A previous offset: the next page; empty or absent for the newest posts */
                offset?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                    "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RealtimeMediasResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    ping: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Quota-Remaining": components["headers"]["X-Quota-Remaining"];
                    "X-Quota-Cost": components["headers"]["X-Quota-Cost"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PingResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalServerError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
