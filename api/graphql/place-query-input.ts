import { GraphQLFloat, GraphQLInputObjectType, GraphQLString } from 'graphql';

/**
 * `PlaceQuery`: a user's description of a place to match, the hosted API's `lookup(query:)` input
 * with the Placekey API's `query_id`, `postal_code` and coordinates (shared/matching/place-query.ts).
 */
export const PlaceQueryInput = new GraphQLInputObjectType({
  name: 'PlaceQuery',
  description: 'A place to match, by what a list of one\'s own places holds. Any subset that identifies a place is accepted: street_address with postal_code or with city and region; location_name with latitude and longitude, with postal_code, or with city and region. Anything less is refused (MATCH_QUERY_INCOMPLETE) with what it has and would need.',
  fields: {
    query_id: { type: GraphQLString, description: 'Yours, echoed in the match result (not matched on).' },
    location_name: { type: GraphQLString, description: 'The place\'s name, as written in your list.' },
    street_address: { type: GraphQLString, description: 'House number and street, as your list writes them.' },
    city: { type: GraphQLString, description: 'The city or town.' },
    region: { type: GraphQLString, description: 'State or province (CA).' },
    postal_code: { type: GraphQLString, description: 'ZIP or postal code (a ZIP+4 or a ZIP that lost its leading zero is read as its five digits).' },
    iso_country_code: { type: GraphQLString, description: 'Two letters (US).' },
    latitude: { type: GraphQLFloat, description: 'WGS84 degrees, -90 to 90; with longitude.' },
    longitude: { type: GraphQLFloat, description: 'WGS84 degrees, -180 to 180; with latitude.' },
  },
});
