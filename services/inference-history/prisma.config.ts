// The shared Prisma 6.19 recipe (driver adapter, JS schema engine, CLI workarounds).
import { servicePrismaConfig } from '../../tools/prisma/config';

export default servicePrismaConfig(__dirname);
