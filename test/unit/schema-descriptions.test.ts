import { expect } from 'chai';
import {
  isEnumType, isInputObjectType, isInterfaceType, isIntrospectionType, isObjectType, isScalarType, isSpecifiedScalarType, type GraphQLSchema,
} from 'graphql';
import { buildV1Schema } from '../../api/graphql/v1/schema.ts';
import { buildV2Schema } from '../../api/graphql/v2/schema.ts';

/** Every element of a schema that should say what it is: its types, fields, arguments, input fields and enum values. */
function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const check = (what: string, description: string | null | undefined) => {
    if (!description || !description.trim()) missing.push(what);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    }
    if (isInputObjectType(type)) for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.description);
    if (isEnumType(type)) for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
  }
  return missing.sort();
}

describe('the schemas of /v1 and /v2 describe themselves', () => {
  for (const [path, build] of [['/v1/graphql', buildV1Schema], ['/v2/graphql', buildV2Schema]] as const) {
    it(`${path}: every type, field, argument and input field has a description`, () => {
      expect(undescribed(build())).to.deep.equal([]);
    });

    it(`${path}: its custom scalars name the specification of their format (specifiedByURL)`, () => {
      const scalars = Object.values(build().getTypeMap()).filter((t) => isScalarType(t) && !isSpecifiedScalarType(t) && !isIntrospectionType(t));
      expect(Object.fromEntries(scalars.map((s) => [s.name, (s as { specifiedByURL?: string | null }).specifiedByURL]))).to.deep.equal({
        Placekey: 'https://github.com/Placekey/placekey-py',
        JSON: 'https://www.rfc-editor.org/rfc/rfc8259',
        ...(path === '/v2/graphql' ? { DateTime: 'https://www.rfc-editor.org/rfc/rfc3339#section-5.6' } : {}),
      });
    });
  }

  it('a schema missing one description is caught', () => {
    const schema = buildV1Schema();
    const field = schema.getQueryType()!.getFields()['lookup']!;
    const saved = field.description;
    field.description = '';
    try {
      expect(undescribed(schema)).to.deep.equal(['Query.lookup']);
    } finally {
      field.description = saved;
    }
  });
});
