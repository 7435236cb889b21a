import { BOOLEAN, DuckDBScalarFunction, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { isValidPlacekey } from '../shared/placekey.ts';

/**
 * Registers `placekey_is_valid(VARCHAR) -> BOOLEAN` on a connection, so the load validates
 * Placekeys with exactly the rules the API applies (including the H3 check, which SQL cannot do).
 */
export function registerPlacekeyUdf(conn: DuckDBConnection): void {
  conn.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'placekey_is_valid',
      returnType: BOOLEAN,
      parameterTypes: [VARCHAR],
      specialHandling: true,
      mainFunction: (_info, input, output) => {
        const keys = input.getColumnVector(0);
        for (let row = 0; row < input.rowCount; row++) {
          const key = keys.getItem(row);
          output.setItem(row, typeof key === 'string' && isValidPlacekey(key));
        }
        output.flush();
      },
    }),
  );
}
