import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { EntityManager, Repository } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { PasswordHasher } from './password-hasher.js';
import { User } from './user.entity.js';

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** NIST SP 800-63B §5.1.1.2: at least 8 characters; a generous maximum keeps hashing bounded. */
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 512;

export interface UserView {
  id: string;
  username: string;
  created_at: string;
}

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly hasher: PasswordHasher,
  ) {}

  async create(username: string, password: string): Promise<User> {
    if (!USERNAME.test(username)) {
      throw new DomainError('invalid_username', 'Username must be 1 to 64 characters: letters, digits, and . _ @ - (not first).');
    }
    this.assertPasswordAcceptable(password);
    if (await this.users.existsBy({ username })) {
      throw new DomainError('username_taken', `A user named "${username}" already exists.`);
    }
    const user = this.users.create({ id: randomUUID(), username, passwordHash: await this.hasher.hash(password) });
    return this.users.save(user);
  }

  /** The user whose password this is, or null; unknown usernames cost as much as wrong passwords. */
  async authenticate(username: string, password: string): Promise<User | null> {
    const user = USERNAME.test(username) && password.length <= PASSWORD_MAX ? await this.users.findOneBy({ username }) : null;
    const ok = await this.hasher.verify(user?.passwordHash, password);
    return ok ? user : null;
  }

  findById(id: string): Promise<User | null> {
    return this.users.findOneBy({ id });
  }

  findByUsername(username: string): Promise<User | null> {
    return USERNAME.test(username) ? this.users.findOneBy({ username }) : Promise.resolve(null);
  }

  list(): Promise<User[]> {
    return this.users.find({ order: { username: 'ASC' } });
  }

  /** A password's hash, once it meets the rules (NIST SP 800-63B §5.1.1.2): a password change is AccountsService's, since it ends sessions too. */
  async hashNewPassword(password: string): Promise<string> {
    this.assertPasswordAcceptable(password);
    return this.hasher.hash(password);
  }

  /** Stores a new password hash, in the caller's transaction. */
  async storePasswordHash(userId: string, passwordHash: string, manager: EntityManager): Promise<void> {
    await manager.update(User, { id: userId }, { passwordHash });
  }

  /** Deletes the user; their codes, tokens, consents and sessions go with them (ON DELETE CASCADE). */
  async delete(username: string): Promise<void> {
    const user = await this.require(username);
    await this.users.delete({ id: user.id });
  }

  toView(user: User): UserView {
    return { id: user.id, username: user.username, created_at: user.createdAt.toISOString() };
  }

  async require(username: string): Promise<User> {
    const user = USERNAME.test(username) ? await this.users.findOneBy({ username }) : null;
    if (!user) throw new DomainError('user_not_found', `No user named "${username}".`);
    return user;
  }

  private assertPasswordAcceptable(password: string): void {
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      throw new DomainError('invalid_password', `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
    }
  }
}
